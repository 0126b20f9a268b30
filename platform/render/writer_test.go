package render

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// protojsonOf is what the gateway's fallback would print for m.
func protojsonOf(t *testing.T, m proto.Message) string {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFloatsMatchProtojson(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, 64.5, 81, 100, 1e-6, 1e-7, 9.999e-7, 1e20, 1e21, 1.5e21, -2.5e-9, 1234.5678,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 1800.25, 0.1 + 0.2}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, math.Float64frombits(r.Uint64()), r.NormFloat64()*1e6, float64(r.IntN(10000))/100)
	}
	for _, v := range vals {
		w := NewWriter(32)
		w.Float(v)
		if want := protojsonOf(t, wrapperspb.Double(v)); string(w.Bytes()) != want {
			t.Fatalf("Float(%v) = %s, protojson %s", v, w.Bytes(), want)
		}
	}
}

func TestStringsMatchProtojson(t *testing.T) {
	vals := []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr", "\x00\x01\x1f\x7f", "<html> & 'x'",
		"é ü 日本 🙂", "\u2028\u2029", "\b\f"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]rune, r.IntN(20))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = rune(r.IntN(0x80))
			case 1:
				b[i] = rune(r.IntN(0x800))
			default:
				b[i] = rune(r.IntN(0x10ffff))
			}
		}
		if s := string(b); utf8.ValidString(s) {
			vals = append(vals, s)
		}
	}
	for _, v := range vals {
		w := NewWriter(32)
		w.String(v)
		if want := protojsonOf(t, wrapperspb.String(v)); string(w.Bytes()) != want {
			t.Fatalf("String(%q) = %s, protojson %s", v, w.Bytes(), want)
		}
	}
	w := NewWriter(8)
	w.String("bad \xff utf8")
	if string(w.Bytes()) != "\"bad \ufffd utf8\"" {
		t.Fatalf("invalid UTF-8 = %s, want U+FFFD in its place", w.Bytes())
	}
}

func TestTimesMatchProtojson(t *testing.T) {
	vals := []time.Time{
		time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC),
		time.Date(2026, 11, 1, 9, 30, 0, 120_000_000, time.UTC),
		time.Date(2026, 11, 1, 9, 30, 0, 123_456_000, time.UTC),
		time.Date(2026, 11, 1, 9, 30, 0, 123_456_789, time.UTC),
		time.Date(2026, 11, 1, 9, 30, 0, 1_000, time.FixedZone("X", 3600)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		vals = append(vals, time.Unix(r.Int64N(253402300799), r.Int64N(1e9)*int64(r.IntN(2))).Truncate(time.Duration(1)<<r.IntN(30)))
	}
	for _, v := range vals {
		w := NewWriter(32)
		w.Time(v)
		if want := protojsonOf(t, timestamppb.New(v)); string(w.Bytes()) != want {
			t.Fatalf("Time(%v) = %s, protojson %s", v, w.Bytes(), want)
		}
	}
}

// TestStructureIsJSON writes nested objects and arrays and checks the result
// against the same structure through protojson, semantically.
func TestStructureIsJSON(t *testing.T) {
	w := NewWriter(64)
	w.Open()
	w.Key("data")
	w.OpenArray()
	for i := range 3 {
		w.Open()
		w.Key("n")
		w.Int(int64(i))
		w.Key("ok")
		w.Bool(i%2 == 0)
		w.Key("none")
		w.Null()
		w.Key("tags")
		w.OpenArray()
		w.String("a")
		w.Raw([]byte(`{"x":[1,2]}`))
		w.CloseArray()
		w.Close()
	}
	w.CloseArray()
	w.Key("empty")
	w.OpenArray()
	w.CloseArray()
	w.Close()
	var got, want any
	if err := json.Unmarshal(w.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %s: %v", w.Bytes(), err)
	}
	row := func(n int, ok bool) map[string]any {
		return map[string]any{"n": n, "ok": ok, "none": nil, "tags": []any{"a", map[string]any{"x": []any{1, 2}}}}
	}
	st, err := structpb.NewStruct(map[string]any{"data": []any{row(0, true), row(1, false), row(2, true)}, "empty": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(protojsonOf(t, st)), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %s\nwant %s", w.Bytes(), protojsonOf(t, st))
	}
	if strings.Contains(string(w.Bytes()), " ") {
		t.Fatalf("unexpected whitespace: %s", w.Bytes())
	}
}

func BenchmarkWriteRow(b *testing.B) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 123_456_000, time.UTC)
	b.ReportAllocs()
	w := NewWriter(1024)
	for b.Loop() {
		w.b = w.b[:0]
		w.Open()
		w.Key("id")
		w.String("019a4b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b")
		w.Key("business_name")
		w.String("Green Leaf Cafe & Bakery")
		w.Key("health_score")
		w.Float(64.5)
		w.Key("created_at")
		w.Time(at)
		w.Close()
	}
}
