#include "cmd/tock/commands/operator.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/commands/confirm.h"
#include "cmd/tock/commands/nexus_endpoint.h"
#include "cmd/tock/commands/search_attributes.h"
#include "lib/common/proto_json.h"

namespace tock::cli {
namespace {

namespace op = temporal::api::operatorservice::v1;
using Stub = op::OperatorService::Stub;

void AddCreate(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::vector<std::string> names;
    std::vector<std::string> types;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "create",
      "Add custom search attributes to the namespace (adding one again with its type is a no-op)");
  cmd->add_option("--name", f->names, "Search attribute name (repeatable, each with its --type)")
      ->required();
  cmd->add_option(
         "--type", f->types,
         "Type of each --name, in the same order: Keyword, Text, Int, Double, Bool, Datetime or "
         "KeywordList (any case)")
      ->required()
      ->check(SearchAttributeTypeCheck());
  cmd->footer(
      "Examples:\n"
      "  tock operator search-attribute create --name CustomerId --type Keyword\n"
      "  tock operator search-attribute create --name Amount --type Int --name Paid --type Bool "
      "-n orders\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      if (f->names.size() != f->types.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("each --name needs its own --type (given: ", f->names.size(), " --name, ",
                         f->types.size(), " --type)"));
      }
      op::AddSearchAttributesRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      std::vector<std::string> added;
      for (size_t i = 0; i < f->names.size(); ++i) {
        auto type = ParseSearchAttributeType(f->types[i]);
        if (!type.ok()) return type.status();
        (*req.mutable_search_attributes())[f->names[i]] = *type;
        added.push_back(absl::StrCat(f->names[i], " (", SearchAttributeTypeName(*type), ")"));
      }
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto out = (*c)->Call(&Stub::AddSearchAttributes, (*c)->operator_service(), req,
                            ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(ProtoToJson(req), {{"Namespace", ctx.options.namespace_name},
                                         {"Added", absl::StrJoin(added, ", ")}});
      return absl::OkStatus();
    };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand(
      "list", "List the namespace's search attributes, custom and system, with their types");
  cmd->footer(
      "-o json prints the ListSearchAttributesResponse (customAttributes, systemAttributes), "
      "as the Temporal CLI does.\n"
      "\n"
      "Examples:\n"
      "  tock operator search-attribute list\n"
      "  tock operator search-attribute list -n orders -o json | jq -r '.customAttributes | "
      "keys[]'\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      op::ListSearchAttributesRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      auto out = (*c)->Call(&Stub::ListSearchAttributes, (*c)->operator_service(), req,
                            ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        printer->Object(ProtoToJson(*out), {});
        return absl::OkStatus();
      }
      // Custom attributes first, each kind sorted by name (the maps have no order).
      printer->BeginList({"NAME", "TYPE", "KIND"});
      for (const auto* kind : {&out->custom_attributes(), &out->system_attributes()}) {
        std::vector<std::pair<std::string, temporal::api::enums::v1::IndexedValueType>> sorted(
            kind->begin(), kind->end());
        std::sort(sorted.begin(), sorted.end());
        const char* label = kind == &out->custom_attributes() ? "custom" : "system";
        for (const auto& [name, type] : sorted) {
          printer->Row({}, {name, SearchAttributeTypeName(type), label});
        }
      }
      printer->EndList();
      printer->EmptyNote("No search attributes.");
      return absl::OkStatus();
    };
  });
}

void AddRemove(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::vector<std::string> names;
    bool yes = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "remove", "Remove custom search attributes from the namespace (asks first)");
  cmd->add_option("--name", f->names, "Search attribute name (repeatable)")->required();
  cmd->add_flag("-y,--yes", f->yes, "Do not ask for confirmation");
  cmd->footer(
      "Examples:\n"
      "  tock operator search-attribute remove --name CustomerId\n"
      "  tock operator search-attribute remove --name Amount --name Paid -n orders --yes\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      const std::string names = absl::StrJoin(f->names, ", ");
      if (absl::Status s =
              Confirm(ctx, f->yes,
                      absl::StrCat("remove search attribute", f->names.size() > 1 ? "s " : " ",
                                   names, " from namespace ", ctx.options.namespace_name));
          !s.ok()) {
        return s;
      }
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      op::RemoveSearchAttributesRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      for (const std::string& name : f->names) req.add_search_attributes(name);
      auto out = (*c)->Call(&Stub::RemoveSearchAttributes, (*c)->operator_service(), req,
                            ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(ProtoToJson(req),
                      {{"Namespace", ctx.options.namespace_name}, {"Removed", names}});
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddOperatorCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "operator",
      "Operate a namespace's search attributes and the cluster's Nexus endpoints (Temporal's "
      "OperatorService)");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock operator search-attribute create --name CustomerId --type Keyword\n"
      "  tock operator search-attribute list\n"
      "  tock operator nexus endpoint list\n");
  CLI::App* sa = group->add_subcommand(
      "search-attribute", "Create, list and remove the custom search attributes of a namespace");
  sa->require_subcommand(1);
  sa->footer(
      "Search attributes belong to the namespace of --namespace. Workflows set them at start\n"
      "(tock workflow start --search-attribute NAME=VALUE) and list queries filter on them.\n"
      "\n"
      "Examples:\n"
      "  tock operator search-attribute create --name CustomerId --type Keyword\n"
      "  tock operator search-attribute list -n orders\n"
      "  tock operator search-attribute remove --name CustomerId --yes\n");
  AddCreate(*sa, ctx);
  AddList(*sa, ctx);
  AddRemove(*sa, ctx);
  AddNexusEndpointCommands(*group, ctx);
}

}  // namespace tock::cli
