package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// svc_output_file's path takes a bucket URL naming the object: the output is streamed into it
// with its asset id and hash; the object deleted by hand is downloaded again; destroy deletes
// it and nothing else. A bucket that does not exist fails the plan.
func TestAccOutputFile_bucket(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	b := newTestBucket(t, "files")
	b.put("keep.txt", "keep")
	const key = "jobs/one/out.png"
	config := outputFileConfig(srv, b.url(key), `asset_id = svc_job.test.outputs[0].id`)
	checkObject := func(s *terraform.State) error {
		attrs := s.RootModule().Resources["svc_output_file.png"].Primary.Attributes
		content, meta, err := b.object(key)
		if err != nil {
			return err
		}
		if meta[bucket.MetaBlake3] != blake3Hex(content) || meta[bucket.MetaBlake3] != attrs["blake3"] || meta[bucket.MetaAssetID] != attrs["asset_id"] ||
			attrs["id"] != "s3://files/"+key || fmt.Sprint(len(content)) != attrs["size_bytes"] {
			return fmt.Errorf("object %s (%d bytes, metadata %v) does not match the state %v", key, len(content), meta, attrs)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      outputFileConfig(srv, b.URL("nowhere", key), `asset_id = svc_job.test.outputs[0].id`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid path.*bucket "nowhere" does not exist`),
			},
			{
				Config: config,
				Check:  resource.ComposeAggregateTestCheckFunc(checkObject, func(*terraform.State) error { return b.remove(key) }),
				// The object was just deleted: the refresh sees it gone.
				ExpectNonEmptyPlan: true,
			},
			{Config: config, Check: checkObject},
		},
	})
	if got := b.objects(); len(got) != 1 || got["keep.txt"] != 4 {
		t.Fatalf("after destroy the bucket holds %v, want only keep.txt", got)
	}
}
