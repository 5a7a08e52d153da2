#include "cmd/tock/commands/nexus_endpoint.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/act.h"
#include "cmd/tock/commands/confirm.h"
#include "cmd/tock/output/history_format.h"
#include "lib/admin/payloads.h"

namespace tock::cli {
namespace {

namespace op = temporal::api::operatorservice::v1;
namespace nexus = temporal::api::nexus::v1;
using Stub = op::OperatorService::Stub;

// A description as the temporal CLI stores it: a JSON string payload (json/plain).
nexus::EndpointSpec WithDescription(nexus::EndpointSpec spec, const std::string& text) {
  absl::StatusOr<temporal::api::common::v1::Payload> p = admin::JsonPayload(nlohmann::json(text).dump());
  if (p.ok()) *spec.mutable_description() = std::move(*p);  // a JSON string always encodes
  return spec;
}

std::string DescriptionText(const nexus::EndpointSpec& spec) {
  if (!spec.has_description()) return "";
  const nlohmann::json decoded = admin::DecodePayload(spec.description());
  return decoded.is_string() ? decoded.get<std::string>() : decoded.dump();
}

std::string TargetText(const nexus::EndpointSpec& spec) {
  if (spec.target().has_worker()) {
    return absl::StrCat(spec.target().worker().namespace_(), "/", spec.target().worker().task_queue());
  }
  return spec.target().external().url();
}

CardRows Card(const nexus::Endpoint& e) {
  return {{"Name", e.spec().name()},
          {"Id", e.id()},
          {"Version", std::to_string(e.version())},
          {"Target", TargetText(e.spec())},
          {"Description", DescriptionText(e.spec())},
          {"Created", TimestampText(e.created_time())},
          {"Last modified", TimestampText(e.last_modified_time())},
          {"URL prefix", e.url_prefix()}};
}

// The target and description flags of create and update.
struct SpecFlags {
  std::string name;
  std::string target_namespace;
  std::string target_task_queue;
  std::string target_url;
  std::string description;
  std::string description_file;
  bool unset_description = false;
};

void AddSpecFlags(CLI::App* cmd, SpecFlags& f) {
  cmd->add_option("--name", f.name, "The endpoint's name (letters, digits and '-')")->required();
  cmd->add_option("--target-namespace", f.target_namespace,
                  "Namespace whose workers handle the endpoint's operations (with --target-task-queue)");
  cmd->add_option("--target-task-queue", f.target_task_queue,
                  "Task queue those workers poll (with --target-namespace)");
  cmd->add_option("--target-url", f.target_url,
                  "An external Nexus server's URL instead of workers (http or https)");
  cmd->add_option("--description", f.description, "Description (markdown)");
  cmd->add_option("--description-file", f.description_file, "Read the description from a file");
}

// Applies the flags given to `spec` (create: an empty one). INVALID_ARGUMENT for flags that
// do not go together.
absl::Status ApplySpecFlags(const SpecFlags& f, nexus::EndpointSpec& spec) {
  const bool worker = !f.target_namespace.empty() || !f.target_task_queue.empty();
  if (worker && !f.target_url.empty()) {
    return absl::InvalidArgumentError(
        "give either --target-namespace and --target-task-queue or --target-url, not both");
  }
  if (!f.description.empty() && !f.description_file.empty()) {
    return absl::InvalidArgumentError("give either --description or --description-file, not both");
  }
  if (f.unset_description && (!f.description.empty() || !f.description_file.empty())) {
    return absl::InvalidArgumentError("--unset-description cannot go with a new description");
  }
  spec.set_name(f.name);
  if (worker) {
    auto* w = spec.mutable_target()->mutable_worker();
    if (!f.target_namespace.empty()) w->set_namespace_(f.target_namespace);
    if (!f.target_task_queue.empty()) w->set_task_queue(f.target_task_queue);
  } else if (!f.target_url.empty()) {
    spec.mutable_target()->mutable_external()->set_url(f.target_url);
  }
  if (!f.description.empty()) spec = WithDescription(spec, f.description);
  if (!f.description_file.empty()) {
    std::ifstream in(f.description_file, std::ios::binary);
    if (!in) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--description-file: cannot read ", admin::EchoQuoted(f.description_file)));
    }
    spec = WithDescription(spec, std::string(std::istreambuf_iterator<char>(in), {}));
  }
  if (f.unset_description) spec.clear_description();
  return absl::OkStatus();
}

// The endpoint named `name` (NOT_FOUND naming it when there is none).
absl::StatusOr<nexus::Endpoint> FindByName(client::Connection& c, const std::string& name) {
  op::ListNexusEndpointsRequest req;
  req.set_name(name);
  auto out = c.Call(&Stub::ListNexusEndpoints, c.operator_service(), req);
  if (!out.ok()) return out.status();
  if (out->endpoints().empty()) {
    return absl::NotFoundError(absl::StrCat("no Nexus endpoint is named ", admin::EchoQuoted(name),
                                            " (tock operator nexus endpoint list shows them)"));
  }
  return out->endpoints(0);
}

void AddCreate(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<SpecFlags>();
  CLI::App* cmd = group.add_subcommand("create", "Create a Nexus endpoint");
  AddSpecFlags(cmd, *f);
  cmd->footer("-o json prints the endpoint (its description decoded).\n\nExamples:\n"
              "  tock operator nexus endpoint create --name payments --target-namespace billing "
              "--target-task-queue payments-handlers\n"
              "  tock operator nexus endpoint create --name partner --target-url "
              "https://nexus.example.com --description 'Partner API'\n");
  Act(cmd, ctx, [f](client::Connection& c, Printer& printer) -> absl::Status {
    op::CreateNexusEndpointRequest req;
    if (absl::Status s = ApplySpecFlags(*f, *req.mutable_spec()); !s.ok()) return s;
    auto out = c.Call(&Stub::CreateNexusEndpoint, c.operator_service(), req);
    if (!out.ok()) return out.status();
    printer.Object(DecodedJson(out->endpoint()), Card(out->endpoint()));
    return absl::OkStatus();
  });
}

void AddGet(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("get", "Show a Nexus endpoint");
  cmd->add_option("--name", *name, "The endpoint's name")->required();
  cmd->footer("-o json prints the endpoint (its description decoded).\n\nExamples:\n"
              "  tock operator nexus endpoint get --name payments\n");
  Act(cmd, ctx, [name](client::Connection& c, Printer& printer) -> absl::Status {
    absl::StatusOr<nexus::Endpoint> e = FindByName(c, *name);
    if (!e.ok()) return e.status();
    printer.Object(DecodedJson(*e), Card(*e));
    return absl::OkStatus();
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand("list", "List the cluster's Nexus endpoints");
  cmd->footer("-o json prints each endpoint.\n\nExamples:\n"
              "  tock operator nexus endpoint list\n"
              "  tock operator nexus endpoint list -o json | jq -r .spec.name\n");
  Act(cmd, ctx, [](client::Connection& c, Printer& printer) -> absl::Status {
    op::ListNexusEndpointsRequest req;
    printer.BeginList({"NAME", "TARGET", "VERSION", "DESCRIPTION", "ID"});
    absl::Status status;
    do {
      auto page = c.Call(&Stub::ListNexusEndpoints, c.operator_service(), req);
      if (!page.ok()) {
        status = page.status();
        break;
      }
      for (const auto& e : page->endpoints()) {
        printer.Row(DecodedJson(e), {e.spec().name(), TargetText(e.spec()), std::to_string(e.version()),
                                     DescriptionText(e.spec()), e.id()});
      }
      req.set_next_page_token(page->next_page_token());
    } while (!req.next_page_token().empty());
    if (!status.ok() && printer.rows_seen() == 0) return status;
    printer.EndList();
    printer.EmptyNote("No Nexus endpoints: tock operator nexus endpoint create makes one.");
    return status;
  });
}

void AddUpdate(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<SpecFlags>();
  CLI::App* cmd = group.add_subcommand(
      "update", "Change a Nexus endpoint's target or description (what is not given stays)");
  AddSpecFlags(cmd, *f);
  cmd->add_flag("--unset-description", f->unset_description, "Remove the description");
  cmd->footer("Examples:\n"
              "  tock operator nexus endpoint update --name payments --target-task-queue payments-v2\n"
              "  tock operator nexus endpoint update --name payments --unset-description\n");
  Act(cmd, ctx, [f](client::Connection& c, Printer& printer) -> absl::Status {
    absl::StatusOr<nexus::Endpoint> current = FindByName(c, f->name);
    if (!current.ok()) return current.status();
    op::UpdateNexusEndpointRequest req;
    req.set_id(current->id());
    req.set_version(current->version());
    *req.mutable_spec() = current->spec();
    if (!f->target_url.empty()) req.mutable_spec()->clear_target();
    if (!f->target_namespace.empty() || !f->target_task_queue.empty()) {
      if (!req.spec().target().has_worker()) req.mutable_spec()->clear_target();
    }
    if (absl::Status s = ApplySpecFlags(*f, *req.mutable_spec()); !s.ok()) return s;
    auto out = c.Call(&Stub::UpdateNexusEndpoint, c.operator_service(), req);
    if (!out.ok()) return out.status();
    printer.Object(DecodedJson(out->endpoint()), Card(out->endpoint()));
    return absl::OkStatus();
  });
}

void AddDelete(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string name;
    bool yes = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("delete", "Delete a Nexus endpoint (asks first)");
  cmd->add_option("--name", f->name, "The endpoint's name")->required();
  cmd->add_flag("-y,--yes", f->yes, "Do not ask for confirmation");
  cmd->footer("Examples:\n  tock operator nexus endpoint delete --name payments --yes\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    absl::StatusOr<nexus::Endpoint> current = FindByName(c, f->name);
    if (!current.ok()) return current.status();
    if (absl::Status s = Confirm(ctx, f->yes, absl::StrCat("delete Nexus endpoint ", f->name));
        !s.ok()) {
      return s;
    }
    op::DeleteNexusEndpointRequest req;
    req.set_id(current->id());
    req.set_version(current->version());
    auto out = c.Call(&Stub::DeleteNexusEndpoint, c.operator_service(), req);
    if (!out.ok()) return out.status();
    printer.Object({{"name", f->name}, {"id", current->id()}}, {{"Deleted", f->name}});
    return absl::OkStatus();
  });
}

}  // namespace

void AddNexusEndpointCommands(CLI::App& operator_group, CommandContext& ctx) {
  CLI::App* nexus = operator_group.add_subcommand("nexus", "Operate the cluster's Nexus endpoints");
  nexus->require_subcommand(1);
  nexus->footer("Examples:\n  tock operator nexus endpoint list\n");
  CLI::App* endpoint = nexus->add_subcommand(
      "endpoint", "Create, show, list, update and delete Nexus endpoints (cluster-wide)");
  endpoint->require_subcommand(1);
  endpoint->footer(
      "An endpoint routes a workflow's Nexus operations to the workers of a namespace and task\n"
      "queue (or to an external Nexus server). Endpoints belong to the cluster, not a namespace.\n"
      "\n"
      "Examples:\n"
      "  tock operator nexus endpoint create --name payments --target-namespace billing "
      "--target-task-queue payments-handlers\n"
      "  tock operator nexus endpoint list\n"
      "  tock operator nexus endpoint delete --name payments --yes\n");
  AddCreate(*endpoint, ctx);
  AddGet(*endpoint, ctx);
  AddList(*endpoint, ctx);
  AddUpdate(*endpoint, ctx);
  AddDelete(*endpoint, ctx);
}

}  // namespace tock::cli
