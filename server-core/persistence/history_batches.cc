#include "server-core/persistence/history_batches.h"

namespace tock::persistence {
namespace {

// History.events is field 1, length-delimited: (1 << 3) | 2.
constexpr char kEventTag = 0x0a;

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Reads a varint at `pos` (at most 10 bytes); false when it runs off the end.
bool ReadVarint(std::string_view in, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < in.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return true;
  }
  return false;
}

}  // namespace

void AppendToBatch(std::string& batch, std::string_view event_bytes) {
  batch.push_back(kEventTag);
  AppendVarint(batch, event_bytes.size());
  batch.append(event_bytes);
}

namespace {

// The batch event `id` goes into: the last one when the id follows it and it has room, else
// a new one.
EventBatch& BatchFor(std::vector<EventBatch>& batches, int64_t id) {
  if (batches.empty() || id != batches.back().first_event_id + batches.back().event_count ||
      batches.back().event_count >= static_cast<int64_t>(kMaxBatchEvents) ||
      batches.back().bytes.size() >= kMaxBatchBytes) {
    batches.emplace_back().first_event_id = id;
  }
  EventBatch& batch = batches.back();
  ++batch.event_count;
  return batch;
}

}  // namespace

std::vector<EventBatch> BatchEvents(absl::Span<const HistoryEvent> events) {
  std::vector<EventBatch> batches;
  for (const HistoryEvent& event : events) {
    std::string& bytes = BatchFor(batches, event.event_id()).bytes;
    bytes.push_back(kEventTag);
    AppendVarint(bytes, event.ByteSizeLong());
    event.AppendToString(&bytes);
  }
  return batches;
}

std::vector<EventBatch> BatchEvents(absl::Span<const int64_t> event_ids,
                                    absl::Span<const std::string> event_bytes) {
  std::vector<EventBatch> batches;
  for (size_t i = 0; i < event_ids.size(); ++i) {
    AppendToBatch(BatchFor(batches, event_ids[i]).bytes, event_bytes[i]);
  }
  return batches;
}

absl::Status VisitBatch(std::string_view batch, int64_t first_event_id,
                        absl::FunctionRef<bool(int64_t, std::string_view)> visit) {
  size_t pos = 0;
  for (int64_t id = first_event_id; pos < batch.size(); ++id) {
    uint64_t length = 0;
    if (batch[pos++] != kEventTag || !ReadVarint(batch, pos, length) ||
        length > batch.size() - pos) {
      return absl::DataLossError("a stored history batch cannot be parsed");
    }
    if (!visit(id, batch.substr(pos, length))) break;
    pos += length;
  }
  return absl::OkStatus();
}

absl::Status EventRangeRead::Visit(std::string_view batch, int64_t first_event_id,
                                   absl::FunctionRef<void(int64_t, std::string_view)> visit) {
  return VisitBatch(batch, first_event_id, [&](int64_t id, std::string_view bytes) {
    done = id >= next || (limit >= 0 && visited >= limit);
    if (done) return false;
    if (id >= from) {
      visit(id, bytes);
      ++visited;
    }
    return true;
  });
}

}  // namespace tock::persistence
