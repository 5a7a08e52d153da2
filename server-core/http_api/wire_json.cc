#include "server-core/http_api/wire_json.h"

#include <bit>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/message.h"
#include "server-core/http_api/json_text.h"

namespace tock::server::http_api {
namespace {

static_assert(std::endian::native == std::endian::little, "fixed-width fields are read by memcpy");

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// What the wire bytes of a type become.
enum class Shape {
  kMessage,         // an object of its fields
  kTimestamp,       // "2026-11-29T10:00:00Z"
  kDuration,        // "1.5s"
  kOtherWellKnown,  // parsed and written by ToJson (Any, Struct, wrappers, ...: rare here)
  kPayload,         // the shorthand when it has one, else an object
  kPayloads,
};

enum WireType : int { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5, kNone = -1 };

WireType WireTypeOf(FieldDescriptor::Type type) {
  switch (type) {
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_BOOL:
    case FieldDescriptor::TYPE_ENUM: return kVarint;
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
    case FieldDescriptor::TYPE_DOUBLE: return kFixed64;
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
    case FieldDescriptor::TYPE_FLOAT: return kFixed32;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE: return kLength;
    default: return kNone;  // groups: not in Temporal's protos, left to ToJson
  }
}

struct TypeTable;

struct FieldEntry {
  std::string key;  // "\"jsonName\":"
  FieldDescriptor::Type type = FieldDescriptor::TYPE_INT32;
  WireType wire = kNone;
  bool repeated = false;
  bool map = false;
  const TypeTable* message = nullptr;  // a message field's type (a map's: the entry type)
  const google::protobuf::EnumDescriptor* enum_type = nullptr;
  std::vector<const std::string*> enum_names;  // by number, for the small ones
};

struct TypeTable {
  const Descriptor* descriptor = nullptr;
  Shape shape = Shape::kMessage;
  std::vector<FieldEntry> fields;
  std::vector<int> slot_of_number;  // field number -> index in fields (-1: none), small numbers
  absl::flat_hash_map<uint64_t, int> slot_of_big_number;

  const FieldEntry* Find(uint64_t number) const {
    if (number < slot_of_number.size()) {
      const int slot = slot_of_number[number];
      return slot < 0 ? nullptr : &fields[slot];
    }
    auto it = slot_of_big_number.find(number);
    return it == slot_of_big_number.end() ? nullptr : &fields[it->second];
  }
};

constexpr int kDenseNumbers = 256;  // field and enum numbers below this in a plain array

// The tables, built on first use of a type for its whole closure and never changed after.
class Tables {
 public:
  static Tables& Instance() {
    static Tables* tables = new Tables;
    return *tables;
  }

  const TypeTable* For(const Descriptor* d) {
    std::lock_guard lock(mu_);
    std::vector<TypeTable*> todo;
    const TypeTable* root = Ensure(d, todo);
    while (!todo.empty()) {
      TypeTable* t = todo.back();
      todo.pop_back();
      Fill(t, todo);
    }
    return root;
  }

 private:
  TypeTable* Ensure(const Descriptor* d, std::vector<TypeTable*>& todo) {
    std::unique_ptr<TypeTable>& slot = tables_[d];
    if (slot == nullptr) {
      slot = std::make_unique<TypeTable>();
      slot->descriptor = d;
      todo.push_back(slot.get());
    }
    return slot.get();
  }

  void Fill(TypeTable* t, std::vector<TypeTable*>& todo) {
    const std::string& name = t->descriptor->full_name();
    if (name == "google.protobuf.Timestamp") {
      t->shape = Shape::kTimestamp;
    } else if (name == "google.protobuf.Duration") {
      t->shape = Shape::kDuration;
    } else if (name.rfind("google.protobuf.", 0) == 0) {
      t->shape = Shape::kOtherWellKnown;
    } else if (name == "temporal.api.common.v1.Payload") {
      t->shape = Shape::kPayload;
    } else if (name == "temporal.api.common.v1.Payloads") {
      t->shape = Shape::kPayloads;
    }
    if (t->shape == Shape::kTimestamp || t->shape == Shape::kDuration ||
        t->shape == Shape::kOtherWellKnown) {
      return;
    }
    t->slot_of_number.assign(kDenseNumbers, -1);
    for (int i = 0; i < t->descriptor->field_count(); ++i) {
      const FieldDescriptor* f = t->descriptor->field(i);
      FieldEntry e;
      e.key = absl::StrCat("\"", f->json_name(), "\":");  // json names are identifiers
      e.type = f->type();
      e.wire = WireTypeOf(f->type());
      e.repeated = f->is_repeated();
      e.map = f->is_map();
      if (f->message_type() != nullptr) e.message = Ensure(f->message_type(), todo);
      if (f->enum_type() != nullptr) {
        e.enum_type = f->enum_type();
        for (int v = 0; v < f->enum_type()->value_count(); ++v) {
          const google::protobuf::EnumValueDescriptor* value = f->enum_type()->value(v);
          if (value->number() < 0 || value->number() >= kDenseNumbers) continue;
          if (e.enum_names.size() <= static_cast<size_t>(value->number())) {
            e.enum_names.resize(value->number() + 1, nullptr);
          }
          // The first name of a number wins, as FindValueByNumber answers.
          if (e.enum_names[value->number()] == nullptr) e.enum_names[value->number()] = &value->name();
        }
      }
      const int slot = static_cast<int>(t->fields.size());
      if (f->number() < kDenseNumbers) {
        t->slot_of_number[f->number()] = slot;
      } else {
        t->slot_of_big_number[f->number()] = slot;
      }
      t->fields.push_back(std::move(e));
    }
  }

  std::mutex mu_;
  absl::flat_hash_map<const Descriptor*, std::unique_ptr<TypeTable>> tables_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool done() const { return p_ >= end_; }

  bool Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const auto b = static_cast<uint8_t>(*p_++);
      result |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) {
        *v = result;
        return true;
      }
    }
    return false;
  }

  bool Fixed(int width, uint64_t* v) {
    if (end_ - p_ < width) return false;
    if (width == 4) {
      uint32_t x;
      std::memcpy(&x, p_, 4);
      *v = x;
    } else {
      std::memcpy(v, p_, 8);
    }
    p_ += width;
    return true;
  }

  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(p_, n);
    p_ += n;
    return true;
  }

  // A scalar of wire type `wire` (varint or fixed) as 64 raw bits.
  bool Raw(int wire, uint64_t* v) {
    switch (wire) {
      case kVarint: return Varint(v);
      case kFixed64: return Fixed(8, v);
      case kFixed32: return Fixed(4, v);
      default: return false;
    }
  }

  bool Skip(int wire) {
    uint64_t ignored;
    std::string_view bytes;
    return wire == kLength ? Bytes(&bytes) : Raw(wire, &ignored);
  }

 private:
  const char* p_;
  const char* end_;
};

int64_t ZigZag(uint64_t raw) { return static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1); }

template <typename T>
T Bits(uint64_t raw) {
  T value;
  if constexpr (sizeof(T) == 4) {
    const auto narrow = static_cast<uint32_t>(raw);
    std::memcpy(&value, &narrow, 4);
  } else {
    std::memcpy(&value, &raw, 8);
  }
  return value;
}

// `bytes` parsed as a message of `type`; null when they are not one.
std::unique_ptr<google::protobuf::Message> Parsed(const Descriptor* type, std::string_view bytes) {
  const google::protobuf::Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(type);
  if (prototype == nullptr) return nullptr;
  std::unique_ptr<google::protobuf::Message> m(prototype->New());
  if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return nullptr;
  return m;
}

class Transcoder : public JsonText {
 public:
  explicit Transcoder(bool shorthand) : shorthand_(shorthand) {}

  // The message's JSON written, or false when the bytes hold what only ToJson writes (or
  // are not a message of the type).
  bool Message(const TypeTable& t, std::string_view bytes, int depth) {
    if (depth > kMaxJsonDepth) return false;
    switch (t.shape) {
      case Shape::kTimestamp:
      case Shape::kDuration: return TimeValue(t.shape, bytes);
      case Shape::kOtherWellKnown: return ByReflection(t, bytes);
      case Shape::kPayload:
        if (shorthand_) {
          temporal::api::common::v1::Payload payload;
          if (!payload.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
          if (ShortPayload(payload)) return true;
        }
        break;
      case Shape::kPayloads:
        if (shorthand_) {
          temporal::api::common::v1::Payloads list;
          if (!list.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
          if (ShortPayloads(list)) return true;
          // The whole list in the proto form, its payloads too.
          shorthand_ = false;
          const bool written = Fields(t, bytes, depth);
          shorthand_ = true;
          return written;
        }
        break;
      case Shape::kMessage: break;
    }
    return Fields(t, bytes, depth);
  }

 private:
  bool Fields(const TypeTable& t, std::string_view bytes, int depth) {
    Reader r(bytes);
    out_.push_back('{');
    const FieldEntry* open = nullptr;  // the repeated field or map being written
    bool open_empty = true;
    bool first = true;
    uint64_t last_number = 0;
    while (!r.done()) {
      uint64_t tag;
      if (!r.Varint(&tag)) return false;
      const uint64_t number = tag >> 3;
      const int wire = static_cast<int>(tag & 7);
      const FieldEntry* f = t.Find(number);
      if (f == nullptr) {  // a field of a newer version of the protos: not written
        if (!r.Skip(wire)) return false;
        continue;
      }
      if (f != open) {
        // A field once, in number order (the serializer's promise); else ToJson decides.
        if (number <= last_number) return false;
        last_number = number;
        Close(open);
        open = nullptr;
        if (!first) out_.push_back(',');
        first = false;
        out_ += f->key;
        if (f->repeated) {
          out_.push_back(f->map ? '{' : '[');
          open = f;
          open_empty = true;
        }
      }
      if (!f->repeated) {
        if (!Value(*f, wire, r, depth)) return false;
        continue;
      }
      if (wire == kLength && f->wire != kLength) {  // packed scalars
        std::string_view chunk;
        if (!r.Bytes(&chunk)) return false;
        Reader packed(chunk);
        while (!packed.done()) {
          uint64_t raw;
          if (!packed.Raw(f->wire, &raw)) return false;
          if (!open_empty) out_.push_back(',');
          open_empty = false;
          Scalar(*f, raw);
        }
        continue;
      }
      if (!open_empty) out_.push_back(',');
      open_empty = false;
      if (f->map) {
        std::string_view entry;
        if (wire != kLength || !r.Bytes(&entry) || !MapEntry(*f->message, entry, depth)) return false;
      } else if (!Value(*f, wire, r, depth)) {
        return false;
      }
    }
    Close(open);
    out_.push_back('}');
    return true;
  }

  void Close(const FieldEntry* open) {
    if (open != nullptr) out_.push_back(open->map ? '}' : ']');
  }

  // One value of `f` read from `r`.
  bool Value(const FieldEntry& f, int wire, Reader& r, int depth) {
    if (wire != f.wire) return false;
    if (wire != kLength) {
      uint64_t raw;
      if (!r.Raw(wire, &raw)) return false;
      Scalar(f, raw);
      return true;
    }
    std::string_view bytes;
    if (!r.Bytes(&bytes)) return false;
    return LengthValue(f, bytes, depth);
  }

  bool LengthValue(const FieldEntry& f, std::string_view bytes, int depth) {
    if (f.type == FieldDescriptor::TYPE_MESSAGE) return Message(*f.message, bytes, depth + 1);
    if (f.type == FieldDescriptor::TYPE_BYTES) {
      Base64(bytes);
    } else {
      String(bytes);
    }
    return true;
  }

  void Scalar(const FieldEntry& f, uint64_t raw) {
    switch (f.type) {
      case FieldDescriptor::TYPE_INT32:
      case FieldDescriptor::TYPE_SFIXED32: absl::StrAppend(&out_, static_cast<int32_t>(raw)); return;
      case FieldDescriptor::TYPE_UINT32:
      case FieldDescriptor::TYPE_FIXED32: absl::StrAppend(&out_, static_cast<uint32_t>(raw)); return;
      case FieldDescriptor::TYPE_SINT32: absl::StrAppend(&out_, static_cast<int32_t>(ZigZag(raw))); return;
      case FieldDescriptor::TYPE_INT64:
      case FieldDescriptor::TYPE_SFIXED64:
        absl::StrAppend(&out_, "\"", static_cast<int64_t>(raw), "\"");
        return;
      case FieldDescriptor::TYPE_UINT64:
      case FieldDescriptor::TYPE_FIXED64: absl::StrAppend(&out_, "\"", raw, "\""); return;
      case FieldDescriptor::TYPE_SINT64: absl::StrAppend(&out_, "\"", ZigZag(raw), "\""); return;
      case FieldDescriptor::TYPE_BOOL: out_ += raw != 0 ? "true" : "false"; return;
      case FieldDescriptor::TYPE_FLOAT: Double(Bits<float>(raw)); return;
      case FieldDescriptor::TYPE_DOUBLE: Double(Bits<double>(raw)); return;
      case FieldDescriptor::TYPE_ENUM: {
        const auto number = static_cast<int32_t>(raw);
        const std::string* name = nullptr;
        if (number >= 0 && static_cast<size_t>(number) < f.enum_names.size()) {
          name = f.enum_names[number];
        } else if (const auto* v = f.enum_type->FindValueByNumber(number)) {
          name = &v->name();
        }
        Enum(name, number);
        return;
      }
      default: return;  // length-delimited types never come here
    }
  }

  // A map entry: "key":value, the value's default when the entry leaves it out.
  bool MapEntry(const TypeTable& entry, std::string_view bytes, int depth) {
    const FieldEntry* key = entry.Find(1);
    const FieldEntry* value = entry.Find(2);
    if (key == nullptr || value == nullptr) return false;
    Reader r(bytes);
    uint64_t key_raw = 0, value_raw = 0;
    std::string_view key_bytes, value_bytes;
    while (!r.done()) {
      uint64_t tag;
      if (!r.Varint(&tag)) return false;
      const int wire = static_cast<int>(tag & 7);
      const FieldEntry* f = (tag >> 3) == 1 ? key : (tag >> 3) == 2 ? value : nullptr;
      if (f == nullptr || wire != f->wire) {
        if (!r.Skip(wire)) return false;
      } else if (!(wire == kLength ? r.Bytes(f == key ? &key_bytes : &value_bytes)
                                   : r.Raw(wire, f == key ? &key_raw : &value_raw))) {
        return false;
      }
    }
    String(KeyText(*key, key_raw, key_bytes));
    out_.push_back(':');
    if (value->wire == kLength) return LengthValue(*value, value_bytes, depth);
    Scalar(*value, value_raw);
    return true;
  }

  static std::string KeyText(const FieldEntry& key, uint64_t raw, std::string_view bytes) {
    switch (key.type) {
      case FieldDescriptor::TYPE_STRING: return std::string(bytes);
      case FieldDescriptor::TYPE_BOOL: return raw != 0 ? "true" : "false";
      case FieldDescriptor::TYPE_INT32:
      case FieldDescriptor::TYPE_SFIXED32: return absl::StrCat(static_cast<int32_t>(raw));
      case FieldDescriptor::TYPE_SINT32: return absl::StrCat(static_cast<int32_t>(ZigZag(raw)));
      case FieldDescriptor::TYPE_UINT32:
      case FieldDescriptor::TYPE_FIXED32: return absl::StrCat(static_cast<uint32_t>(raw));
      case FieldDescriptor::TYPE_INT64:
      case FieldDescriptor::TYPE_SFIXED64: return absl::StrCat(static_cast<int64_t>(raw));
      case FieldDescriptor::TYPE_SINT64: return absl::StrCat(ZigZag(raw));
      default: return absl::StrCat(raw);
    }
  }

  bool TimeValue(Shape shape, std::string_view bytes) {
    Reader r(bytes);
    int64_t seconds = 0;
    int32_t nanos = 0;
    while (!r.done()) {
      uint64_t tag, raw;
      if (!r.Varint(&tag)) return false;
      if ((tag & 7) != kVarint) return false;
      if (!r.Varint(&raw)) return false;
      if (tag >> 3 == 1) seconds = static_cast<int64_t>(raw);
      if (tag >> 3 == 2) nanos = static_cast<int32_t>(raw);
    }
    shape == Shape::kTimestamp ? Timestamp(seconds, nanos) : Duration(seconds, nanos);
    return true;
  }

  bool ByReflection(const TypeTable& t, std::string_view bytes) {
    std::unique_ptr<google::protobuf::Message> m = Parsed(t.descriptor, bytes);
    if (m == nullptr) return false;
    absl::StatusOr<std::string> json = ToJson(*m, JsonOptions{shorthand_, false});
    if (!json.ok()) return false;
    out_ += *json;
    return true;
  }

  bool shorthand_;
};

}  // namespace

std::optional<std::string> TranscodeWire(const Descriptor* type, std::string_view bytes,
                                         bool payload_shorthand) {
  Transcoder transcoder(payload_shorthand);
  if (!transcoder.Message(*Tables::Instance().For(type), bytes, 0)) return std::nullopt;
  return transcoder.Take();
}

absl::StatusOr<std::string> WireToJson(const Descriptor* type, std::string_view bytes,
                                       const JsonOptions& options) {
  if (!options.pretty) {  // indented output is a reader's view, not the hot path
    if (std::optional<std::string> json = TranscodeWire(type, bytes, options.payload_shorthand)) {
      return std::move(*json);
    }
  }
  std::unique_ptr<google::protobuf::Message> m = Parsed(type, bytes);
  if (m == nullptr) return absl::InternalError("the server's answer could not be read");
  return ToJson(*m, options);
}

}  // namespace tock::server::http_api
