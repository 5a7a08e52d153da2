// Custom search attributes: the schema from a namespace's aliases, the values each type
// takes (Temporal's messages for the others), the columns a run fills, and the query
// language over custom fields.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server-core/visibility/query.h"
#include "server-core/visibility/search_attributes.h"

namespace tock::server::visibility {
namespace {

namespace enums = temporal::api::enums::v1;
using persistence::CustomColumn;
using persistence::CustomType;
using persistence::VisibilityField;
using persistence::VisibilityOp;
using persistence::VisibilityValue;

SearchAttributeSchema Schema() {
  google::protobuf::Map<std::string, std::string> aliases;
  aliases["Keyword01"] = "CustomerId";
  aliases["Text02"] = "Notes";
  aliases["Int01"] = "Amount";
  aliases["Double03"] = "Score";
  aliases["Bool01"] = "Paid";
  aliases["Datetime01"] = "DueAt";
  aliases["KeywordList01"] = "Tags";
  aliases["Keyword11"] = "NotAField";  // beyond the pre-allocated ones: ignored
  aliases["Keyword02"] = "";           // a freed field: ignored
  return SearchAttributeSchema(aliases);
}

temporal::api::common::v1::Payload Json(const std::string& data) {
  temporal::api::common::v1::Payload p;
  (*p.mutable_metadata())["encoding"] = "json/plain";
  p.set_data(data);
  return p;
}

temporal::api::common::v1::SearchAttributes Attributes(
    std::initializer_list<std::pair<std::string, std::string>> fields) {
  temporal::api::common::v1::SearchAttributes out;
  for (const auto& [name, data] : fields) (*out.mutable_indexed_fields())[name] = Json(data);
  return out;
}

TEST(SearchAttributesTest, FieldsNameTheirColumnAndType) {
  EXPECT_EQ(FieldName({CustomType::kKeywordList, 3}), "KeywordList03");
  EXPECT_EQ(ColumnOfField("KeywordList03"), (CustomColumn{CustomType::kKeywordList, 3}));
  EXPECT_EQ(ColumnOfField("Keyword10"), (CustomColumn{CustomType::kKeyword, 10}));
  EXPECT_FALSE(ColumnOfField("Keyword11").has_value());
  EXPECT_FALSE(ColumnOfField("Int04").has_value());
  EXPECT_FALSE(ColumnOfField("Int1").has_value());
  EXPECT_FALSE(ColumnOfField("Text").has_value());
  EXPECT_EQ(persistence::CustomColumnName({CustomType::kDatetime, 2}), "datetime02");
  EXPECT_EQ(persistence::AllCustomColumns().size(), 28u);
}

TEST(SearchAttributesTest, SchemaKeepsOnlyPreallocatedFieldsWithANames) {
  const SearchAttributeSchema schema = Schema();
  EXPECT_EQ(schema.custom().size(), 7u);
  ASSERT_NE(schema.Find("Tags"), nullptr);
  EXPECT_EQ(schema.Find("Tags")->type, enums::INDEXED_VALUE_TYPE_KEYWORD_LIST);
  EXPECT_EQ(schema.Find("Notes")->column, (CustomColumn{CustomType::kText, 2}));
  EXPECT_EQ(schema.Find("customerid"), nullptr) << "names are case-sensitive";
  EXPECT_EQ(schema.Find("NotAField"), nullptr);
}

TEST(SearchAttributesTest, ValuesOfTheirTypeAreAccepted) {
  const auto ok = Attributes({{"CustomerId", "\"c-42\""},
                              {"Notes", "\"late delivery\""},
                              {"Amount", "42"},
                              {"Score", "4.5"},
                              {"Paid", "true"},
                              {"DueAt", "\"2026-11-25T10:00:00Z\""},
                              {"Tags", "[\"a\",\"b\"]"},
                              {"TemporalChangeVersion", "[\"v1\"]"}});
  EXPECT_TRUE(CheckSearchAttributes(ok, Schema()).ok())
      << CheckSearchAttributes(ok, Schema());
  // The SDKs' legacy untyped attributes are one-element arrays; an empty one unsets.
  EXPECT_TRUE(CheckSearchAttributes(Attributes({{"Amount", "[7]"}, {"CustomerId", "[]"},
                                                {"Tags", "\"one\""}, {"Score", "3"}}),
                                    Schema())
                  .ok());
}

TEST(SearchAttributesTest, OtherValuesGetTemporalsMessages) {
  const SearchAttributeSchema schema = Schema();
  auto message = [&](const std::string& name, const std::string& data) {
    return std::string(CheckSearchAttributes(Attributes({{name, data}}), schema).message());
  };
  EXPECT_EQ(message("Amount", "\"abc\""), "invalid value for search attribute Amount of type Int: abc");
  EXPECT_EQ(message("Amount", "4.5"), "invalid value for search attribute Amount of type Int: 4.5");
  EXPECT_EQ(message("Paid", "\"yes\""), "invalid value for search attribute Paid of type Bool: yes");
  EXPECT_EQ(message("DueAt", "\"tomorrow\""),
            "invalid value for search attribute DueAt of type Datetime: tomorrow");
  EXPECT_EQ(message("Tags", "[1,2]"), "invalid value for search attribute Tags of type KeywordList: [1 2]");
  EXPECT_EQ(message("CustomerId", "[\"a\",\"b\"]"),
            "invalid value for search attribute CustomerId of type Keyword: [a b]");
  EXPECT_EQ(message("Amount", "{not json"),
            "invalid value for search attribute Amount of type Int: value from <{not json>");
  EXPECT_EQ(message("Unknown", "1"), "search attribute Unknown is not defined");
  EXPECT_EQ(message("WorkflowId", "\"x\""), "WorkflowId attribute can't be set in SearchAttributes");
  EXPECT_EQ(message(std::string(300, 'x'), "1").size(),
            std::string("search attribute  is not defined").size() + 103)
      << "a long name is cut";
}

TEST(SearchAttributesTest, IndexedValuesFillTheColumnsOfDefinedAttributes) {
  const auto attributes = Attributes({{"CustomerId", "\"c-42\""},
                                      {"Notes", "\"Late, DELIVERY\""},
                                      {"Amount", "[42]"},
                                      {"Score", "3"},
                                      {"Paid", "false"},
                                      {"DueAt", "\"1970-01-01T00:00:01.5Z\""},
                                      {"Tags", "\"solo\""},
                                      {"BuildIds", "[\"b\"]"},
                                      {"Gone", "1"}});
  std::vector<persistence::CustomValue> values = IndexedValues(attributes, Schema());
  std::map<std::string, VisibilityValue> by_column;
  for (const auto& v : values) by_column[persistence::CustomColumnName(v.column)] = v.value;
  EXPECT_EQ(by_column.size(), 7u) << "predefined and unknown attributes have no column";
  EXPECT_EQ(by_column["keyword01"], VisibilityValue(std::string("c-42")));
  EXPECT_EQ(by_column["text02"], VisibilityValue(std::string(" late delivery ")));
  EXPECT_EQ(by_column["int01"], VisibilityValue(int64_t{42}));
  EXPECT_EQ(by_column["double03"], VisibilityValue(3.0));
  EXPECT_EQ(by_column["bool01"], VisibilityValue(int64_t{0}));
  EXPECT_EQ(by_column["datetime01"], VisibilityValue(int64_t{1'500'000'000}));
  EXPECT_EQ(by_column["keywordlist01"], VisibilityValue(std::string("[\"solo\"]")));
  const std::string json = persistence::CustomValuesJson(values);
  EXPECT_NE(json.find("\"double03\":3.0"), std::string::npos) << json;
  EXPECT_EQ(persistence::CustomValuesJson({}), "");
}

TEST(SearchAttributesTest, QueriesOnCustomFieldsAreTyped) {
  const SearchAttributeSchema schema = Schema();
  auto f = CompileQuery(
      "CustomerId = 'c-42' AND Amount >= -5 AND Score < 2.5e1 AND Paid = true AND "
      "DueAt > '2026-11-25T00:00:00Z' AND Tags IN ('a', 'b') AND Notes = 'late' AND "
      "CustomerId IS NOT NULL",
      schema);
  ASSERT_TRUE(f.ok()) << f.status();
  const auto& c = f->predicate.children;
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0].condition.field, VisibilityField::kCustom);
  EXPECT_EQ(c[0].condition.custom, (CustomColumn{CustomType::kKeyword, 1}));
  EXPECT_EQ(c[1].condition.values[0], VisibilityValue(int64_t{-5}));
  EXPECT_EQ(c[2].condition.values[0], VisibilityValue(25.0));
  EXPECT_EQ(c[3].condition.values[0], VisibilityValue(int64_t{1}));
  EXPECT_EQ(c[4].condition.values[0],
            VisibilityValue(int64_t{1'795'564'800} * 1'000'000'000));
  EXPECT_EQ(c[5].condition.op, VisibilityOp::kIn);
  EXPECT_EQ(c[7].condition.op, VisibilityOp::kIsNotNull);

  auto grouped = CompileQuery("CustomerId = 'c-42' GROUP BY ExecutionStatus", schema);
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  EXPECT_TRUE(grouped->group_by_status);
  auto ordered = CompileQuery("ORDER BY Amount DESC, DueAt", schema);
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  ASSERT_EQ(ordered->order_by.size(), 2u);
  EXPECT_EQ(ordered->order_by[0].custom, (CustomColumn{CustomType::kInt, 1}));
}

TEST(SearchAttributesTest, BadQueriesOnCustomFieldsNameWhatIsWrong) {
  const SearchAttributeSchema schema = Schema();
  auto message = [&](const std::string& query) {
    return std::string(CompileQuery(query, schema).status().message());
  };
  EXPECT_EQ(message("Amount = 'x'"),
            "invalid query: 'x' at position 10 is not a value of Amount; it takes an integer");
  EXPECT_EQ(message("Score = 'x'"),
            "invalid query: 'x' at position 9 is not a value of Score; it takes a number");
  EXPECT_EQ(message("Paid = maybe"),
            "invalid query: 'maybe' at position 8 is not a value of Paid; it takes true or false");
  EXPECT_EQ(message("Notes > 'a'"),
            "invalid query: operator '>' at position 7 is not supported for Text attribute 'Notes'");
  EXPECT_EQ(message("Tags STARTS_WITH 'a'"),
            "invalid query: STARTS_WITH at position 6 needs a text field");
  EXPECT_EQ(message("Amount STARTS_WITH 'a'"),
            "invalid query: STARTS_WITH at position 8 needs a text field");
  EXPECT_EQ(message("ORDER BY Tags"),
            "invalid query: cannot order by 'Tags' at position 10: a KeywordList attribute has "
            "no order");
  EXPECT_EQ(message("GROUP BY WorkflowType"),
            "invalid query: 'group by' clause is only supported for ExecutionStatus search "
            "attribute (got 'WorkflowType' at position 10)");
  EXPECT_EQ(message("GROUP BY ExecutionStatus ORDER BY StartTime"),
            "invalid query: 'order by' clause is not supported with 'group by' clause");
  EXPECT_EQ(message("Amount IS 5"),
            "invalid query: unexpected token '5' at position 11; expected NULL after IS or IS NOT");
  EXPECT_NE(message("customerid = 'x'").find("unknown field 'customerid'"), std::string::npos);
  std::string many;
  for (int i = 0; i < 33; ++i) absl::StrAppend(&many, "w", i, " ");
  EXPECT_NE(message(absl::StrCat("Notes = '", many, "'")).find("has more than 32 words"),
            std::string::npos);
  EXPECT_TRUE(CompileQuery("CustomerId = 'x'").status().message().find("unknown field") !=
              absl::string_view::npos)
      << "without the namespace's schema a custom name is unknown";
}

}  // namespace
}  // namespace tock::server::visibility
