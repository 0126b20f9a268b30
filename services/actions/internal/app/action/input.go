package action

// Input is a request's action-specific fields, validated against the
// action's declaration, with defaults applied: strings, float64 numbers
// and []string arrays.
type Input map[string]any

// Str returns a string field, "" when absent.
func (in Input) Str(name string) string { s, _ := in[name].(string); return s }

// Num returns a number field, 0 when absent.
func (in Input) Num(name string) float64 { f, _ := in[name].(float64); return f }

// Int returns an integer field, 0 when absent.
func (in Input) Int(name string) int { return int(in.Num(name)) }

// Strs returns an array field, nil when absent.
func (in Input) Strs(name string) []string { s, _ := in[name].([]string); return s }
