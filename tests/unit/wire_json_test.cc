// The HTTP API's JSON written from wire bytes (wire_json.h) against the reflection writer
// (ToJson): the same JSON for messages of every answer type filled at random, the shorthand
// on and off, and the fallback where the bytes break the serializer's order.
#include <gtest/gtest.h>

#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "server-core/http_api/json_codec.h"
#include "server-core/http_api/route_table.h"
#include "server-core/http_api/wire_json.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::http_api {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using nlohmann::json;
namespace common = temporal::api::common::v1;
namespace wf = temporal::api::workflowservice::v1;

// Messages filled at random through reflection: every field type, payloads of every shape,
// strings that need escaping, times across the whole range. Bounded depth and size.
class Filler {
 public:
  explicit Filler(uint32_t seed) : rng_(seed) {}

  void Fill(Message* m, int depth) {
    const Descriptor* d = m->GetDescriptor();
    if (d == common::Payload::descriptor()) return FillPayload(static_cast<common::Payload*>(m));
    const std::string& name = d->full_name();
    const Reflection* r = m->GetReflection();
    if (name == "google.protobuf.Timestamp" || name == "google.protobuf.Duration") {
      const bool timestamp = name == "google.protobuf.Timestamp";
      const int64_t seconds = timestamp ? Between(-62'135'596'800, 253'402'300'799)
                                        : Between(-315'576'000'000, 315'576'000'000);
      int32_t nanos = static_cast<int32_t>(Pick({0, 500'000'000, 123'000, 7, 999'999'999}));
      if (!timestamp && seconds < 0) nanos = -nanos;
      r->SetInt64(m, d->FindFieldByNumber(1), seconds);
      r->SetInt32(m, d->FindFieldByNumber(2), nanos);
      return;
    }
    if (absl::StartsWith(name, "google.protobuf.") && !absl::EndsWith(name, "Value")) return;
    if (name == "google.protobuf.Value" || name == "google.protobuf.ListValue") return;
    // One member of each oneof, at random (setting them all would keep the last).
    std::set<const FieldDescriptor*> chosen;
    for (int i = 0; i < d->oneof_decl_count(); ++i) {
      const auto* oneof = d->oneof_decl(i);
      chosen.insert(oneof->field(Between(0, oneof->field_count() - 1)));
    }
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->containing_oneof() != nullptr && !chosen.contains(f)) continue;
      if (Between(0, 2) == 0) continue;  // a third of the fields left unset
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && depth >= kMaxDepth) continue;
      const int n = f->is_repeated() ? static_cast<int>(Between(1, depth < 2 ? 3 : 1)) : 1;
      for (int k = 0; k < n; ++k) SetOne(m, f, depth);
    }
  }

 private:
  static constexpr int kMaxDepth = 5;

  int64_t Between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  int64_t Pick(std::initializer_list<int64_t> values) {
    return *(values.begin() + Between(0, static_cast<int64_t>(values.size()) - 1));
  }

  std::string Text() {
    static const std::vector<std::string> kTexts = {
        "", "order-1", "with \"quotes\" and \\ and /", "tab\tnew\nline\x01", "ünïcödé ✓ 😀",
        "a/b?c=d&e", std::string(300, 'x')};
    return kTexts[Between(0, kTexts.size() - 1)];
  }

  std::string Bytes() {
    std::string out(Between(0, 12), '\0');
    for (char& c : out) c = static_cast<char>(Between(0, 255));
    return out;
  }

  void FillPayload(common::Payload* p) {
    switch (Between(0, 5)) {
      case 0: (*p->mutable_metadata())["encoding"] = "json/plain"; p->set_data(R"({"a":[1,2.5,"x"]})"); break;
      case 1: (*p->mutable_metadata())["encoding"] = "json/plain"; p->set_data("not json"); break;
      case 2: (*p->mutable_metadata())["encoding"] = "binary/null"; break;
      case 3:
        (*p->mutable_metadata())["encoding"] = "json/protobuf";
        (*p->mutable_metadata())["messageType"] = "my.Type";
        p->set_data(R"({"id": 7})");
        break;
      case 4: (*p->mutable_metadata())["encoding"] = "binary/plain"; p->set_data(Bytes()); break;
      default: break;  // an empty payload
    }
  }

  void SetOne(Message* m, const FieldDescriptor* f, int depth) {
    const Reflection* r = m->GetReflection();
    const bool rep = f->is_repeated();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        const auto v = static_cast<int32_t>(Pick({0, 1, -1, 2147483647, -2147483647 - 1, 42}));
        rep ? r->AddInt32(m, f, v) : r->SetInt32(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        const int64_t v = Pick({1, -1, 9'007'199'254'740'993, INT64_MIN, INT64_MAX});
        rep ? r->AddInt64(m, f, v) : r->SetInt64(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        const auto v = static_cast<uint32_t>(Pick({1, 4'294'967'295}));
        rep ? r->AddUInt32(m, f, v) : r->SetUInt32(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        const uint64_t v = Between(0, 1) ? UINT64_MAX : 5;
        rep ? r->AddUInt64(m, f, v) : r->SetUInt64(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT: {
        static const double kDoubles[] = {0.5, -1e300, 3.14159, 1e-7, 0.1, NAN, INFINITY, -INFINITY};
        const double v = kDoubles[Between(0, 7)];
        if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
          rep ? r->AddDouble(m, f, v) : r->SetDouble(m, f, v);
        } else {
          rep ? r->AddFloat(m, f, static_cast<float>(v)) : r->SetFloat(m, f, static_cast<float>(v));
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_BOOL:
        rep ? r->AddBool(m, f, Between(0, 1) == 1) : r->SetBool(m, f, Between(0, 1) == 1);
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const auto* e = f->enum_type();
        // Now and then a number the enum does not name (a newer server's value).
        const int v = Between(0, 9) == 0 ? 9999 : e->value(Between(0, e->value_count() - 1))->number();
        rep ? r->AddEnumValue(m, f, v) : r->SetEnumValue(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        const std::string v = f->type() == FieldDescriptor::TYPE_BYTES ? Bytes() : Text();
        rep ? r->AddString(m, f, v) : r->SetString(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        Fill(rep ? r->AddMessage(m, f) : r->MutableMessage(m, f), depth + 1);
        break;
    }
  }

  std::mt19937 rng_;
};

// The JSON of `m` written both ways, parsed (objects compare without order: a map's entries
// come in hash order).
void ExpectSameJson(const Message& m, bool shorthand) {
  const std::string bytes = m.SerializeAsString();
  std::optional<std::string> wire = TranscodeWire(m.GetDescriptor(), bytes, shorthand);
  ASSERT_TRUE(wire.has_value()) << m.GetDescriptor()->full_name() << " fell back to reflection";
  absl::StatusOr<std::string> reflected = ToJson(m, JsonOptions{shorthand, false});
  ASSERT_TRUE(reflected.ok()) << reflected.status();
  const json a = json::parse(*wire, nullptr, false), b = json::parse(*reflected, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << *wire;
  EXPECT_EQ(a, b) << m.GetDescriptor()->full_name() << "\nwire:       " << wire->substr(0, 3000)
                  << "\nreflection: " << reflected->substr(0, 3000);
}

TEST(HttpWireJsonTest, EveryAnswerTypeFilledAtRandomWritesWhatReflectionWrites) {
  absl::StatusOr<RouteTable> routes = RouteTable::Served();
  ASSERT_TRUE(routes.ok()) << routes.status();
  std::set<const Descriptor*> types;
  for (const Route& route : routes->routes()) {
    types.insert(route.method->output_type());
    types.insert(route.method->input_type());
  }
  ASSERT_GT(types.size(), 100u);
  auto& factory = *google::protobuf::MessageFactory::generated_factory();
  uint32_t seed = 1;
  for (const Descriptor* type : types) {
    for (int round = 0; round < 4; ++round) {
      std::unique_ptr<Message> m(factory.GetPrototype(type)->New());
      Filler(seed++).Fill(m.get(), 0);
      ExpectSameJson(*m, true);
      ExpectSameJson(*m, false);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(HttpWireJsonTest, HistoriesOfEveryEventKindWriteWhatReflectionWrites) {
  // Each round fills a page of events, each with one of the attribute kinds at random.
  std::set<std::string> kinds;
  for (uint32_t seed = 1000; seed < 1300; ++seed) {
    wf::GetWorkflowExecutionHistoryResponse page;
    Filler(seed).Fill(page.mutable_history(), 1);
    ExpectSameJson(page, true);
    ExpectSameJson(page, false);
    if (HasFatalFailure()) return;
    for (const auto& event : page.history().events()) {
      if (event.attributes_case() != 0) kinds.insert(std::to_string(event.attributes_case()));
    }
  }
  EXPECT_GE(kinds.size(), 40u) << "the rounds should cover most event kinds";
}

TEST(HttpWireJsonTest, TimesAcrossTheirRangeInProtobufsForm) {
  struct Case {
    int64_t seconds;
    int32_t nanos;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{{0, 0, "1970-01-01T00:00:00Z"},
                                         {-1, 500'000'000, "1969-12-31T23:59:59.500Z"},
                                         {951'782'400, 1'000, "2000-02-29T00:00:00.000001Z"},
                                         {-62'135'596'800, 0, "0001-01-01T00:00:00Z"},
                                         {253'402'300'799, 999'999'999, "9999-12-31T23:59:59.999999999Z"},
                                         {1'796'083'200, 7, "2026-12-01T00:00:00.000000007Z"}}) {
    google::protobuf::Timestamp t;
    t.set_seconds(c.seconds);
    t.set_nanos(c.nanos);
    std::optional<std::string> wire = TranscodeWire(t.GetDescriptor(), t.SerializeAsString(), true);
    ASSERT_TRUE(wire.has_value());
    EXPECT_EQ(*wire, absl::StrCat("\"", c.text, "\""));
    std::string expected;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(t, &expected).ok());
    EXPECT_EQ(*wire, expected);
  }
}

TEST(HttpWireJsonTest, BytesOutOfTheSerializersOrderAreLeftToReflectionAndStillRight) {
  // Two messages' bytes one after the other: protobuf merges them (the later singular field
  // wins, lists append). The transcoder declines; WireToJson's answer is the merged message.
  wf::DescribeNamespaceResponse a, b;
  a.mutable_namespace_info()->set_name("first");
  a.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(86'400);
  b.mutable_namespace_info()->set_name("second");
  b.mutable_replication_config()->add_clusters()->set_cluster_name("east");
  const std::string bytes = a.SerializeAsString() + b.SerializeAsString();
  EXPECT_FALSE(TranscodeWire(a.GetDescriptor(), bytes, true).has_value());
  absl::StatusOr<std::string> merged = WireToJson(a.GetDescriptor(), bytes, JsonOptions{});
  ASSERT_TRUE(merged.ok()) << merged.status();
  const json out = json::parse(*merged);
  EXPECT_EQ(out["namespaceInfo"]["name"], "second");
  EXPECT_EQ(out["config"]["workflowExecutionRetentionTtl"], "86400s");
  EXPECT_EQ(out["replicationConfig"]["clusters"][0]["clusterName"], "east");
}

TEST(HttpWireJsonTest, BytesThatAreNoMessageAreAnInternalError) {
  for (const std::string& bytes : {std::string("\x0a\xff\xff\xff\xff\x0f", 6), std::string("\x0b", 1),
                                   std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11)}) {
    absl::StatusOr<std::string> json =
        WireToJson(wf::DescribeNamespaceResponse::descriptor(), bytes, JsonOptions{});
    EXPECT_EQ(json.status().code(), absl::StatusCode::kInternal);
  }
}

TEST(HttpWireJsonTest, NestingBeyondTheLimitIsLeftToReflectionWhichRefusesIt) {
  // A failure whose causes nest deeper than the JSON limit.
  temporal::api::failure::v1::Failure root;
  temporal::api::failure::v1::Failure* at = &root;
  for (int i = 0; i < kMaxJsonDepth + 5; ++i) {
    at->set_message("level");
    at = at->mutable_cause();
  }
  EXPECT_FALSE(TranscodeWire(root.GetDescriptor(), root.SerializeAsString(), true).has_value());
  absl::StatusOr<std::string> json = WireToJson(root.GetDescriptor(), root.SerializeAsString(), JsonOptions{});
  EXPECT_EQ(json.status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace tock::server::http_api
