package value_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
	// Every service's protos: the test reads their RPCs' request messages.
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// TestEveryRequestListDeclaresAMaximum reads the request messages of every
// Atrium RPC, and the messages nested in them, from the compiled protos:
// a repeated or map field (a Struct or ListValue included) without a
// max_items option is a list a client could make as long as it likes.
func TestEveryRequestListDeclaresAMaximum(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	var missing, misplaced []string
	counted := 0
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] || md.ParentFile().Package() == "google.protobuf" {
			return
		}
		seen[md.FullName()] = true
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			max, declared := value.MaxItems(fd)
			switch {
			case value.Countable(fd) && !declared:
				missing = append(missing, string(fd.FullName()))
			case value.Countable(fd) && max < 1:
				misplaced = append(misplaced, fmt.Sprintf("%s (max_items = 0 allows nothing)", fd.FullName()))
			case !value.Countable(fd) && declared:
				misplaced = append(misplaced, fmt.Sprintf("%s (not a list or a map)", fd.FullName()))
			case declared:
				counted++
			}
			if fd.Message() != nil && !fd.IsMap() {
				walk(fd.Message())
			}
		}
	}
	methods := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "atrium.") {
			return true
		}
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				methods++
				walk(sd.Methods().Get(j).Input())
			}
		}
		return true
	})
	// The walk reaches what it should: every service's RPCs, and the lists
	// known today (a smaller count means the walk lost its way).
	if methods < 73 || counted < 17 {
		t.Fatalf("walked %d RPCs and %d bounded fields; want every RPC of the five services (73 or more) and at least the 17 bounded fields of today", methods, counted)
	}
	if len(missing) > 0 {
		t.Errorf("request fields without a maximum; give each [(atrium.limits.v1.max_items) = N] (docs/http-api.md, \"Limits\"):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(misplaced) > 0 {
		t.Errorf("misplaced max_items options:\n  %s", strings.Join(misplaced, "\n  "))
	}
}

// TestDocsStateTheMaxima keeps docs/http-api.md's table of the limits
// saying what the protos declare: each bounded field is in a row that
// states its maximum, and the 400's wording is quoted.
func TestDocsStateTheMaxima(t *testing.T) {
	b, err := os.ReadFile("../../docs/http-api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## Limits\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{"`<field> has <n> items; at most <max> are allowed`", "`<field> has <n> keys; at most <max> are allowed`"} {
		if !strings.Contains(section, want) {
			t.Errorf("docs/http-api.md's Limits no longer quote %s", want)
		}
	}
	var rows []string
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "| ") {
			rows = append(rows, line)
		}
	}
	// The field of an action's fields is the whole body: the table names
	// what the client sends.
	alias := map[string]string{"params": "the fields of an action"}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "atrium.") {
			return true
		}
		for i := range fd.Messages().Len() {
			md := fd.Messages().Get(i)
			for j := range md.Fields().Len() {
				f := md.Fields().Get(j)
				max, ok := value.MaxItems(f)
				if !ok {
					continue
				}
				name := "`" + string(f.Name()) + "`"
				if a, ok := alias[string(f.Name())]; ok {
					name = a
				}
				stated := false
				for _, r := range rows {
					// | field | maximum | why |: the maximum's cell has the
					// number as a word (64, 200 keys, 32 and 10,000).
					cells := strings.Split(r, "|")
					if len(cells) < 4 || !strings.Contains(cells[1], name) {
						continue
					}
					stated = stated || slices.Contains(strings.Fields(cells[2]), value.Count(max))
				}
				if !stated {
					t.Errorf("docs/http-api.md's Limits table has no row with %s and its maximum %s (%s)", name, value.Count(max), f.FullName())
				}
			}
		}
		return true
	})
}

func strs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("item.e%d", i)
	}
	return out
}

func listValue(t *testing.T, n int) *structpb.ListValue {
	t.Helper()
	vals := make([]any, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("item.e%d", i)
	}
	l, err := structpb.NewList(vals)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func object(t *testing.T, n int) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = float64(i)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckItems(t *testing.T) {
	options := func(n int) []*collectionsv1.FieldDefinition {
		return []*collectionsv1.FieldDefinition{{Key: "a", Type: "text"}, {Key: "b", Type: "select", Options: strs(n)}}
	}
	cases := []struct {
		name string
		req  proto.Message
		want string // "" when it passes
	}{
		{"a list at its maximum", &webhooksv1.CreateWebhookRequest{Events: strs(64)}, ""},
		{"a list one over", &webhooksv1.CreateWebhookRequest{Events: strs(65)}, "events has 65 items; at most 64 are allowed"},
		{"the list of the report", &webhooksv1.CreateWebhookRequest{Events: strs(65000)}, "events has 65000 items; at most 64 are allowed"},
		{"a ListValue", &webhooksv1.UpdateWebhookRequest{Events: listValue(t, 65)}, "events has 65 items; at most 64 are allowed"},
		{"a ListValue at its maximum", &webhooksv1.UpdateWebhookRequest{Events: listValue(t, 64)}, ""},
		{"a Struct's keys", &collectionsv1.CreateItemRequest{Data: object(t, 201)}, "data has 201 keys; at most 200 are allowed"},
		{"a Struct at its maximum", &collectionsv1.CreateItemRequest{Data: object(t, 200)}, ""},
		{"a nested list, named by its path", &collectionsv1.CreateCollectionRequest{Fields: options(501)}, "fields[1].options has 501 items; at most 500 are allowed"},
		{"a nested list at its maximum", &collectionsv1.CreateCollectionRequest{Fields: options(500)}, ""},
		{"a repeated Struct", &datav1.CreateRowsRequest{Rows: make([]*structpb.Struct, 10001)}, "rows has 10001 items; at most 10000 are allowed"},
		{"a list in a list", &datav1.WriteRecordsRequest{Writes: []*datav1.RecordWrite{{}, {Rows: make([]*structpb.Struct, 10001)}}},
			"writes[1].rows has 10001 items; at most 10000 are allowed"},
		{"a message with no lists", &webhooksv1.GetWebhookRequest{Id: "x"}, ""},
		{"an empty request", &webhooksv1.CreateWebhookRequest{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := value.CheckItems(c.req)
			if c.want == "" {
				if err != nil {
					t.Fatalf("CheckItems = %v, want nil", err)
				}
				return
			}
			if apperr.KindOf(err) != apperr.KindInvalid || err.Error() != c.want {
				t.Fatalf("CheckItems = %v, want the 400 %q", err, c.want)
			}
		})
	}
}

// TestCheckBody: a field that is the whole HTTP body is named as such,
// since the client never wrote its name.
func TestCheckBody(t *testing.T) {
	req := &actionsv1.RunActionRequest{Params: object(t, 65)}
	if err := value.CheckBody(req, "params"); err == nil || err.Error() != "the request body has 65 keys; at most 64 are allowed" {
		t.Fatalf("CheckBody = %v, want the request body named", err)
	}
	if err := value.CheckItems(req); err == nil || err.Error() != "params has 65 keys; at most 64 are allowed" {
		t.Fatalf("CheckItems = %v, want params named", err)
	}
	req.Params = object(t, 64)
	if err := value.CheckBody(req, "params"); err != nil {
		t.Fatalf("CheckBody at the maximum = %v", err)
	}
}

// BenchmarkCheckItems is what every request pays: a message with no list
// costs a lookup, one with a list a walk of its fields.
func BenchmarkCheckItems(b *testing.B) {
	get := &webhooksv1.GetWebhookRequest{Id: "x"}
	create := &webhooksv1.CreateWebhookRequest{Events: strs(3), Url: "https://example.com/hook"}
	b.Run("no lists", func(b *testing.B) {
		for b.Loop() {
			_ = value.CheckItems(get)
		}
	})
	b.Run("a list", func(b *testing.B) {
		for b.Loop() {
			_ = value.CheckItems(create)
		}
	})
}
