package provider

import "testing"

// The router request's record model, its attribute types and svc_router_request's schema name
// the same read-only attributes with the same types.
func TestRouterRecordSchemaAgrees(t *testing.T) {
	t.Parallel()
	res := protocolAttributes(t, protocolSchemas(t).ResourceSchemas["svc_router_request"])
	names := sortedKeys(routerRecordAttrTypes)
	assertSameNames(t, "routerRecordModel", tfsdkNames(routerRecordModel{}), names)
	assertSameNames(t, "svc_router_request's read-only attributes but id", readOnlyNames(res, "id"), names)
	attrs := routerRecordAttributes()
	for _, name := range names {
		if got, want := typeOf(attrs[name]), routerRecordAttrTypes[name]; got == nil || !got.Equal(want) {
			t.Errorf("attribute %s: type %v, want %v", name, got, want)
		}
	}
}
