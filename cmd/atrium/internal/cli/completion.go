package cli

// atrium completion bash|zsh|fish: a script completing atrium's commands,
// their subcommands at every depth and each verb's flags, generated from
// the same command table Run dispatches.

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
)

type completionOptions struct {
	*Factory
	Shell string
}

func newCompletionCmd(f *Factory, runF func(context.Context, *completionOptions) error) *Command {
	o := &completionOptions{Factory: f}
	c := &Command{Name: "completion", Summary: "print a shell completion script (bash, zsh or fish)"}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		c.Subs = append(c.Subs, &Command{Name: shell, Summary: "the " + shell + " completion script",
			Run: func(ctx context.Context, _ []string) error {
				o.Shell = shell
				if runF != nil {
					return runF(ctx, o)
				}
				_, err := fmt.Fprint(o.env.Stdout, completionScript(o.root, o.Factory, shell))
				return err
			}})
	}
	return c
}

// completionNode is what completes after a command path: its
// subcommands, or a verb's flags.
type completionNode struct {
	path  string // "" for atrium itself, "admin collections", ...
	words []string
	flags []string
}

// completionNodes walks the table: every noun with its subcommands and
// every verb with its flags.
func completionNodes(root *Command, f *Factory) []completionNode {
	var out []completionNode
	var walk func(c *Command, path string, admin bool)
	walk = func(c *Command, path string, admin bool) {
		admin = admin || c.Admin
		switch {
		case len(c.Subs) > 0:
			out = append(out, completionNode{path: path, words: c.subNames(), flags: []string{"--help"}})
			for _, s := range c.Subs {
				walk(s, strings.TrimSpace(path+" "+s.Name), admin)
			}
		case c.Raw == nil:
			// A scratch flag set: the verb's flags bound to a throwaway
			// copy of the factory, so completing changes nothing.
			fs := c.flagSet(&Factory{env: f.env}, path, admin)
			var flags []string
			fs.VisitAll(func(fl *flag.Flag) {
				dash := "--"
				if len(fl.Name) == 1 {
					dash = "-"
				}
				flags = append(flags, dash+fl.Name)
			})
			out = append(out, completionNode{path: path, flags: append(flags, "--help")})
		}
	}
	walk(root, "", false)
	return out
}

// globalValueFlags are the global flags that take a value: the word after
// one is not a command.
const globalValueFlags = "--url|-url|--api-key|-api-key|-o|--output|-output|--admin-url|-admin-url|--admin-token|-admin-token"

func completionScript(root *Command, f *Factory, shell string) string {
	nodes := completionNodes(root, f)
	var b strings.Builder
	switch shell {
	case "bash", "zsh":
		if shell == "zsh" {
			b.WriteString("#compdef atrium\nautoload -U +X bashcompinit && bashcompinit\n")
		}
		fmt.Fprintf(&b, "# atrium completion (%s); load with: source <(atrium completion %s)\n", shell, shell)
		b.WriteString("_atrium() {\n  local cur=${COMP_WORDS[COMP_CWORD]} path=\"\" skip=\"\" w words=\"\" flags=\"\"\n")
		b.WriteString("  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n")
		b.WriteString("    if [[ -n $skip ]]; then skip=\"\"; continue; fi\n")
		fmt.Fprintf(&b, "    case $w in\n      %s) skip=1 ;;\n      -*) ;;\n      *) path=\"${path:+$path }$w\" ;;\n    esac\n  done\n", globalValueFlags)
		b.WriteString("  case $path in\n")
		for _, n := range nodes {
			fmt.Fprintf(&b, "    %q) words=%q; flags=%q ;;\n", n.path, strings.Join(n.words, " "), strings.Join(n.flags, " "))
		}
		b.WriteString("  esac\n")
		b.WriteString("  if [[ $cur == -* ]]; then words=$flags; fi\n")
		b.WriteString("  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -F _atrium atrium\n")
	case "fish":
		b.WriteString("# atrium completion (fish); load with: atrium completion fish | source\n")
		b.WriteString("function __atrium_path\n  set -l path\n  set -l skip 0\n  for w in (commandline -opc)[2..-1]\n")
		b.WriteString("    if test $skip = 1\n      set skip 0\n      continue\n    end\n")
		fmt.Fprintf(&b, "    switch $w\n      case %s\n        set skip 1\n      case '-*'\n      case '*'\n        set path $path $w\n    end\n  end\n",
			strings.ReplaceAll(globalValueFlags, "|", " "))
		b.WriteString("  test \"$path\" = \"$argv[1]\"\nend\n")
		b.WriteString("complete -c atrium -f\n")
		for _, n := range nodes {
			if len(n.words) > 0 {
				fmt.Fprintf(&b, "complete -c atrium -n '__atrium_path %q' -a %q\n", n.path, strings.Join(n.words, " "))
			}
			for _, fl := range n.flags {
				if name, ok := strings.CutPrefix(fl, "--"); ok {
					fmt.Fprintf(&b, "complete -c atrium -n '__atrium_path %q' -l %s\n", n.path, name)
				} else if slices.Contains([]string{"-o"}, fl) {
					fmt.Fprintf(&b, "complete -c atrium -n '__atrium_path %q' -s o -xa 'table json csv'\n", n.path)
				}
			}
		}
	}
	return b.String()
}
