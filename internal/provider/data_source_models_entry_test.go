package provider

import (
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// An svc_models entry has the attribute types its values are built with, and svc_model shows
// the same entry: model_provider, model and billing read as the entry's provider, model and
// billing.
func TestModelEntrySchemasAgree(t *testing.T) {
	t.Parallel()
	schemas := protocolSchemas(t)
	list := protocolAttributes(t, schemas.DataSourceSchemas["svc_models"])["models"]
	one := protocolAttributes(t, schemas.DataSourceSchemas["svc_model"])
	if list == nil || list.NestedType == nil {
		t.Fatal("svc_models has no nested models attribute")
	}
	entry := make(map[string]*tfprotov6.SchemaAttribute, len(list.NestedType.Attributes))
	for _, a := range list.NestedType.Attributes {
		entry[a.Name] = a
	}
	assertSameNames(t, "svc_models entry", sortedKeys(entry), sortedKeys(modelEntryAttrTypes))
	for name, want := range modelEntryAttrTypes {
		if got := typeOf(modelEntryAttributes()[name]); got == nil || !got.Equal(want) {
			t.Errorf("entry attribute %s: type %v, want %v", name, got, want)
		}
	}
	for single, inList := range map[string]string{"model_provider": "provider", "model": "model", "billing": "billing"} {
		a, b := one[single], entry[inList]
		if a == nil || b == nil {
			t.Errorf("svc_model.%s or the entry's %s is missing", single, inList)
			continue
		}
		renamed := *a
		renamed.Name = b.Name
		if !reflect.DeepEqual(&renamed, b) {
			t.Errorf("svc_model.%s differs from the entry's %s:\n %s\n %s", single, inList, attributeJSON(a), attributeJSON(b))
		}
	}
}
