package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// protocolSchemas returns the schemas Terraform is given, from a provider of its own.
func protocolSchemas(t *testing.T) *tfprotov6.GetProviderSchemaResponse {
	t.Helper()
	resp, err := providerserver.NewProtocol6(New("test")())().GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Fatalf("schema diagnostic: %s: %s", d.Summary, d.Detail)
	}
	return resp
}

// protocolAttributes indexes a schema's top-level attributes by name.
func protocolAttributes(t *testing.T, s *tfprotov6.Schema) map[string]*tfprotov6.SchemaAttribute {
	t.Helper()
	if s == nil || s.Block == nil {
		t.Fatal("no such schema")
	}
	out := make(map[string]*tfprotov6.SchemaAttribute, len(s.Block.Attributes))
	for _, a := range s.Block.Attributes {
		out[a.Name] = a
	}
	return out
}

// readOnlyNames lists, sorted, the attributes that configuration cannot set (computed, neither
// optional nor required), leaving out those named in except.
func readOnlyNames(attrs map[string]*tfprotov6.SchemaAttribute, except ...string) []string {
	var names []string
	for name, a := range attrs {
		if a.Computed && !a.Optional && !a.Required && !slices.Contains(except, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// tfsdkNames lists, sorted, the attribute names a model struct's fields are tagged with.
func tfsdkNames(model any) []string {
	rt := reflect.TypeOf(model)
	names := make([]string, 0, rt.NumField())
	for i := range rt.NumField() {
		if tag, ok := rt.Field(i).Tag.Lookup("tfsdk"); ok {
			names = append(names, tag)
		}
	}
	slices.Sort(names)
	return names
}

// sortedKeys lists a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func assertSameNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: names %s, want %s", what, strings.Join(got, ","), strings.Join(want, ","))
	}
}

// typeOf is a schema attribute's type; nil for no attribute.
func typeOf(a interface{ GetType() attr.Type }) attr.Type {
	if a == nil {
		return nil
	}
	return a.GetType()
}

// attributeJSON shows a protocol attribute, nested attributes included, for a failure message.
func attributeJSON(a *tfprotov6.SchemaAttribute) string {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Sprintf("%+v", a)
	}
	return string(b)
}

// nestedAttributes indexes a nested attribute's own attributes by name.
func nestedAttributes(t *testing.T, a *tfprotov6.SchemaAttribute) map[string]*tfprotov6.SchemaAttribute {
	t.Helper()
	if a == nil || a.NestedType == nil {
		t.Fatalf("not a nested attribute: %s", attributeJSON(a))
	}
	out := make(map[string]*tfprotov6.SchemaAttribute, len(a.NestedType.Attributes))
	for _, n := range a.NestedType.Attributes {
		out[n.Name] = n
	}
	return out
}

// jobSchemaForTest is svc_job's schema and the Terraform type of its values (and of its
// configuration).
func jobSchemaForTest(t testing.TB) (resource.SchemaResponse, tftypes.Object) {
	t.Helper()
	var resp resource.SchemaResponse
	NewJobResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	typ, ok := resp.Schema.Type().TerraformType(context.Background()).(tftypes.Object)
	if !ok {
		t.Fatal("svc_job's type is not an object")
	}
	return resp, typ
}
