package main

// atrium completion bash|zsh|fish: a script completing atrium's commands
// and subcommands, made from the same command tree the CLI runs.

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// completionTree is every command and its subcommands (admin's resources
// have their own).
func completionTree() map[string][]string {
	tree := map[string][]string{}
	for _, c := range []string{"serve", "migrate", "principal", "load-rows", "openapi", "version", "help"} {
		tree[c] = nil
	}
	for n, c := range clientCommands {
		tree[n] = c.subs
	}
	return tree
}

var adminSubs = map[string][]string{
	"agencies": {"list", "create"}, "sites": {"list", "create"},
	"clients": {"list", "create", "link", "unlink"}, "keys": {"list", "create", "revoke"}, "credits": {"get", "add"},
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func runCompletion(_ context.Context, in *invocation, args []string) error {
	shell, _, err := in.subcommand(args, "bash", "zsh", "fish")
	if err != nil {
		return err
	}
	tree := completionTree()
	cmds := sortedKeys(tree)
	var b strings.Builder
	switch shell {
	case "bash", "zsh":
		if shell == "zsh" {
			b.WriteString("#compdef atrium\nautoload -U +X bashcompinit && bashcompinit\n")
		}
		b.WriteString("# atrium completion (bash); load with: source <(atrium completion bash)\n")
		b.WriteString("_atrium() {\n  local cur=${COMP_WORDS[COMP_CWORD]} words=\"\"\n  case $COMP_CWORD in\n")
		fmt.Fprintf(&b, "    1) words=%q ;;\n", strings.Join(cmds, " "))
		b.WriteString("    2) case ${COMP_WORDS[1]} in\n")
		for _, c := range cmds {
			if len(tree[c]) > 0 {
				fmt.Fprintf(&b, "         %s) words=%q ;;\n", c, strings.Join(tree[c], " "))
			}
		}
		b.WriteString("       esac ;;\n    3) case ${COMP_WORDS[1]} in\n         admin) case ${COMP_WORDS[2]} in\n")
		for _, r := range sortedKeys(adminSubs) {
			fmt.Fprintf(&b, "           %s) words=%q ;;\n", r, strings.Join(adminSubs[r], " "))
		}
		b.WriteString("         esac ;;\n       esac ;;\n  esac\n")
		b.WriteString("  if [[ $cur == -* ]]; then words=\"--url --api-key -o --output --help\"; fi\n")
		b.WriteString("  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -F _atrium atrium\n")
	case "fish":
		b.WriteString("# atrium completion (fish); load with: atrium completion fish | source\n")
		b.WriteString("complete -c atrium -f\n")
		fmt.Fprintf(&b, "complete -c atrium -n '__fish_use_subcommand' -a %q\n", strings.Join(cmds, " "))
		for _, c := range cmds {
			if len(tree[c]) > 0 {
				fmt.Fprintf(&b, "complete -c atrium -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a %q\n",
					c, strings.Join(tree[c], " "), strings.Join(tree[c], " "))
			}
		}
		for _, r := range sortedKeys(adminSubs) {
			fmt.Fprintf(&b, "complete -c atrium -n '__fish_seen_subcommand_from admin; and __fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a %q\n",
				r, strings.Join(adminSubs[r], " "), strings.Join(adminSubs[r], " "))
		}
		b.WriteString("complete -c atrium -l url -d 'the API base URL' -r\ncomplete -c atrium -l api-key -d 'the API key' -r\n")
		b.WriteString("complete -c atrium -s o -l output -d 'output format' -xa 'table json csv'\n")
	}
	_, err = fmt.Fprint(in.env.stdout, b.String())
	return err
}
