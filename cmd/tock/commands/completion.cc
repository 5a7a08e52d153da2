#include "cmd/tock/commands/completion.h"

#include <memory>

#include "cmd/tock/complete/completer.h"
#include "cmd/tock/complete/scripts.h"

namespace tock::cli {

void AddCompletionCommands(CLI::App& app, CommandContext& ctx) {
  {
    auto shell = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("completion", "Print the shell completion script");
    cmd->add_option("shell", *shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember(complete::Shells()));
    cmd->footer(
        "Completes commands, flags, enum values and, from the server (within 300 ms, silent\n"
        "when it cannot be reached), namespaces, workflow ids, task queues and clusters.\n"
        "\n"
        "Examples:\n"
        "  source <(tock completion bash)                       # this bash session\n"
        "  tock completion bash > ~/.local/share/bash-completion/completions/tock\n"
        "  tock completion zsh > \"${fpath[1]}/_tock\"            # then restart zsh\n"
        "  tock completion fish > ~/.config/fish/completions/tock.fish\n");
    cmd->callback([&ctx, shell] {
      ctx.action = [&ctx, shell]() -> absl::Status {
        ctx.out << complete::CompletionScript(*shell);
        return absl::OkStatus();
      };
    });
  }
  {
    // Hidden (no group). `tock __complete [PROGRAM] WORDS... CURRENT` prints the candidates
    // for CURRENT, one a line, "VALUE" or "VALUE<TAB>DESCRIPTION"; nothing (exit 0) when
    // there are none or the server cannot be reached. Every word after the first plain one
    // is data, however it looks (--help, -n, --): a prefix command with extras allowed and
    // no help flag of its own, which does not fall through to the global flags.
    CLI::App* cmd = app.add_subcommand("__complete", "Print completion candidates");
    cmd->group("");
    cmd->set_help_flag();
    cmd->fallthrough(false);
    cmd->prefix_command();
    cmd->allow_extras();
    cmd->footer("Example:\n  tock __complete namespace describe \"\"\n");
    cmd->callback([&ctx, &app, cmd] {
      std::vector<std::string> typed = cmd->remaining();
      // The scripts pass the program name first (as the shell has it), so that CLI11 sees a
      // plain word before any `--` the user typed. A first word that is neither a command
      // nor a flag is that name.
      if (typed.size() > 1 && !typed.front().empty() && typed.front()[0] != '-') {
        bool command = false;
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
          command = command || sub->check_name(typed.front());
        }
        if (!command) typed.erase(typed.begin());
      }
      std::string current;
      if (!typed.empty()) {
        current = typed.back();
        typed.pop_back();
      }
      ctx.action = [&ctx, typed, current]() -> absl::Status {
        complete::Completer completer(ctx);
        for (const complete::Candidate& c : completer.Complete(typed, current)) {
          ctx.out << c.value;
          if (!c.description.empty()) ctx.out << '\t' << c.description;
          ctx.out << '\n';
        }
        return absl::OkStatus();
      };
    });
  }
}

}  // namespace tock::cli
