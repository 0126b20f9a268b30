// Package envflag lets every Atrium command take each setting from a flag or
// from an ATRIUM_* environment variable, with flags winning. Container
// platforms set environment variables; people at a shell type flags.
package envflag

import (
	"flag"
	"fmt"
	"strings"
)

// EnvName is the environment variable for flag name: prefix plus the name
// in upper case with dashes as underscores (--http-addr: ATRIUM_HTTP_ADDR).
func EnvName(prefix, name string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// commandLineOnly marks a flag's value as one only the command line sets.
type commandLineOnly struct{ flag.Value }

// IsBoolFlag keeps a marked boolean flag usable without a value (--version).
func (v commandLineOnly) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// CommandLineOnly marks the flag name of fs as a question asked on the
// command line (such as --version), never a setting: Parse does not read it
// from the environment, and the usage names no variable for it.
func CommandLineOnly(fs *flag.FlagSet, name string) {
	if f := fs.Lookup(name); f != nil {
		f.Value = commandLineOnly{f.Value}
	}
}

func isCommandLineOnly(f *flag.Flag) bool {
	_, ok := f.Value.(commandLineOnly)
	return ok
}

// Parse parses args into fs, then sets every flag not given in args from its
// environment variable, if lookup finds one.
func Parse(fs *flag.FlagSet, args []string, prefix string, lookup func(string) (string, bool)) error {
	fs.Usage = func() { usage(fs, prefix) }
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil || isCommandLineOnly(f) {
			return
		}
		env := EnvName(prefix, f.Name)
		if v, ok := lookup(env); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("invalid value %q for %s: %w", v, env, e)
			}
		}
	})
	return err
}

func usage(fs *flag.FlagSet, prefix string) {
	out := fs.Output()
	fmt.Fprintf(out, "Usage of %s (every flag can also be set by the environment variable shown):\n", fs.Name())
	fs.VisitAll(func(f *flag.Flag) {
		if isCommandLineOnly(f) {
			fmt.Fprintf(out, "  --%s  (command line only)\n", f.Name)
		} else {
			fmt.Fprintf(out, "  --%s  (%s)\n", f.Name, EnvName(prefix, f.Name))
		}
		def := ""
		if f.DefValue != "" {
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(out, "        %s%s\n", f.Usage, def)
	})
}
