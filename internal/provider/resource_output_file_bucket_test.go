package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

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

// A 200 MiB output streams into a bucket: the provider, a plugin process of its own here,
// holds one part at a time, whatever the size (its peak resident set stays far below the
// output's size). The object carries the output's hash.
func TestAccOutputFile_bucketLargeOutputStreams(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const size = 200 << 20
	srv := newTestServer(t, emulator.Options{})
	id, hash := srv.PutLargeAsset("big.bin", "application/octet-stream", size)
	b := newTestBucket(t, "large")
	pluginDir := buildProvider(t)
	bin := filepath.Join(pluginDir, "terraform-provider-svc")
	tf := newBinaryTerraform(t, pluginDir)
	tf.writeConfig(outputFileAssetConfig(srv, id, b.url("big/big.bin"), fmt.Sprintf("expected_hash = %q", hash)))
	peak := watchPeakRSSOf(bin)
	start := time.Now()
	out, err := tf.try("apply", "-auto-approve", "-input=false", "-no-color")
	rss := peak()
	t.Logf("%d MiB output into a bucket: apply %.1f s, provider peak RSS %.1f MiB", size>>20, time.Since(start).Seconds(), float64(rss)/(1<<20))
	if err != nil {
		t.Fatalf("apply failed: %v\n%s", err, out)
	}
	objects := b.objects()
	if objects["big/big.bin"] != size {
		t.Fatalf("the bucket holds %v, want big/big.bin of %d bytes", objects, size)
	}
	head, err := b.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(b.name), Key: aws.String("big/big.bin")})
	if err != nil || head.Metadata[bucket.MetaBlake3] != hash || head.Metadata[bucket.MetaAssetID] != id {
		t.Fatalf("big/big.bin metadata %v (%v), want blake3 %s and asset %s", head.Metadata, err, hash, id)
	}
	// The provider alone peaks at 80-115 MiB here, for 20, 200 and 600 MiB outputs alike (measured
	// when this was written): an output held whole would pass 160 MiB.
	if rss == 0 || rss > 160<<20 {
		t.Fatalf("provider peak RSS %.1f MiB, want above 0 and under 160 MiB for a %d MiB output", float64(rss)/(1<<20), size>>20)
	}
}
