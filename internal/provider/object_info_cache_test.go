package provider

import (
	"context"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// object_info is read once per provider configuration; a failed read is not kept, so the next
// conversion asks the service again.
func TestObjectInfoCacheKeepsOnlySuccess(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	srv.Inject(emulator.Fault{Op: emulator.OpV1ObjectInfo, Nth: 1, Status: 500, Body: `{"error":{"code":"internal","message":"down"}}`})
	c, err := client.New(client.Config{Endpoint: srv.URL(), MaxRetries: 0, MaxRetriesSet: true})
	if err != nil {
		t.Fatal(err)
	}
	d := &providerData{client: c, objectInfoCache: &objectInfoCache{}}
	ctx := context.Background()
	if _, err := d.classDefs(ctx); err == nil {
		t.Fatal("the first read should fail")
	}
	for i := range 3 {
		defs, err := d.classDefs(ctx)
		if err != nil || defs["ImageNoiseSampler"] == nil {
			t.Fatalf("read %d after the failure: %v", i+1, err)
		}
	}
	if _, err := d.objectInfo(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(emulator.OpV1ObjectInfo); n != 2 {
		t.Fatalf("%d object_info requests, want 2 (the failure, then one read kept)", n)
	}
}
