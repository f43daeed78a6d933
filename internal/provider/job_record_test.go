package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

func TestKeepSignedURLs(t *testing.T) {
	ctx := context.Background()
	const held = "https://cdn.example/assets/a1/content?sig=old"
	later := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }
	tests := []struct {
		name      string
		heldUntil string
		asset     string // asset id of the new record's output
		newURL    string
		wantKept  bool
	}{
		{name: "valid held URL kept", heldUntil: later(time.Hour), asset: "a1", newURL: "https://cdn.example/assets/a1/content?sig=new", wantKept: true},
		{name: "held URL near expiry replaced", heldUntil: later(time.Minute), asset: "a1", newURL: "https://cdn.example/assets/a1/content?sig=new"},
		{name: "expired held URL replaced", heldUntil: later(-time.Minute), asset: "a1", newURL: "https://cdn.example/assets/a1/content?sig=new"},
		{name: "unparseable expiry replaced", heldUntil: "soon", asset: "a1", newURL: "https://cdn.example/assets/a1/content?sig=new"},
		{name: "moved content replaced", heldUntil: later(time.Hour), asset: "a1", newURL: "https://cdn.example/assets/a1/v2?sig=new"},
		{name: "other host replaced", heldUntil: later(time.Hour), asset: "a1", newURL: "https://cdn2.example/assets/a1/content?sig=new"},
		{name: "other asset untouched", heldUntil: later(time.Hour), asset: "a2", newURL: "https://cdn.example/assets/a2/content?sig=new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: outputAttrTypes}, []outputModel{{
				NodeID: types.StringValue("3"), Name: types.StringValue("x.png"), Type: types.StringValue("image"),
				ContentType: types.StringValue("image/png"), SizeBytes: types.Int64Value(1), ID: types.StringValue("a1"),
				Hash: types.StringNull(), URL: types.StringValue(held), URLExpiresAt: types.StringValue(tt.heldUntil), JobID: types.StringNull(),
			}})
			if d.HasError() {
				t.Fatal(d)
			}
			job := &client.Job{Outputs: []client.Output{{Asset: client.Asset{ID: tt.asset, URL: tt.newURL, URLExpiresAt: later(2 * time.Hour)}}}}
			keepSignedURLs(ctx, list, job, time.Now())
			if kept := job.Outputs[0].URL == held; kept != tt.wantKept {
				t.Fatalf("url = %q; kept %v, want %v", job.Outputs[0].URL, kept, tt.wantKept)
			}
			if tt.wantKept && job.Outputs[0].URLExpiresAt != tt.heldUntil {
				t.Fatalf("url_expires_at = %q, want the held %q with the held URL", job.Outputs[0].URLExpiresAt, tt.heldUntil)
			}
		})
	}
}

func TestJobRecordWarningsAreDiagnostics(t *testing.T) {
	t.Parallel()
	job := &client.Job{ID: "j1", Status: client.JobSucceeded, DecodeWarnings: []string{"progress.value = 1e400 does not fit a finite number; it was left empty"}}
	_, diags := newJobRecordModel(context.Background(), job)
	if diags.HasError() || diags.WarningsCount() != 1 || !strings.Contains(diags.Warnings()[0].Detail(), "progress.value = 1e400") {
		t.Fatalf("diagnostics %v, want one warning naming the value", diags)
	}
}

// The job record's model, its attribute types and the svc_job resource's and data source's
// schemas name the same attributes with the same types, and both schemas show Terraform the same
// record: one that drifted from the others fails here rather than at the first read.
func TestJobRecordSchemasAgree(t *testing.T) {
	t.Parallel()
	schemas := protocolSchemas(t)
	res := protocolAttributes(t, schemas.ResourceSchemas["svc_job"])
	ds := protocolAttributes(t, schemas.DataSourceSchemas["svc_job"])
	names := sortedKeys(jobRecordAttrTypes)
	assertSameNames(t, "jobRecordModel", tfsdkNames(jobRecordModel{}), names)
	assertSameNames(t, "resource svc_job's read-only attributes but id", readOnlyNames(res, "id"), names)
	assertSameNames(t, "data source svc_job's read-only attributes", readOnlyNames(ds), names)
	resAttrs, dsAttrs := jobRecordResourceAttributes(), jobRecordDataSourceAttributes()
	for _, name := range names {
		want := jobRecordAttrTypes[name]
		if got := typeOf(resAttrs[name]); got == nil || !got.Equal(want) {
			t.Errorf("resource attribute %s: type %v, want %v", name, got, want)
		}
		if got := typeOf(dsAttrs[name]); got == nil || !got.Equal(want) {
			t.Errorf("data source attribute %s: type %v, want %v", name, got, want)
		}
		if !reflect.DeepEqual(res[name], ds[name]) {
			t.Errorf("%s differs:\n resource    %s\n data source %s", name, attributeJSON(res[name]), attributeJSON(ds[name]))
		}
	}
}

// Each nested object's model struct names the attributes of its attribute types.
func TestJobRecordNestedModelsMatchTheirTypes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		model any
		types map[string]attr.Type
	}{
		{progressModel{}, progressAttrTypes},
		{outputModel{}, outputAttrTypes},
		{jobErrorModel{}, jobErrorAttrTypes},
		{jobURLsModel{}, jobURLsAttrTypes},
	} {
		assertSameNames(t, reflect.TypeOf(tt.model).Name(), tfsdkNames(tt.model), sortedKeys(tt.types))
	}
}
