package provider

import (
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"lukechampine.com/blake3"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// totalRequestsSince checks that want requests of any kind reached srv since *before.
func totalRequestsSince(srv *emulator.Server, before *int, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if n := srv.TotalRequests() - *before; n != want {
			return fmt.Errorf("%d requests reached the service in this step, want %d", n, want)
		}
		*before = srv.TotalRequests()
		return nil
	}
}

func blake3Hex(s string) string {
	sum := blake3.Sum256([]byte(s))
	return "blake3:" + hex.EncodeToString(sum[:])
}

// rowObjects checks that the bucket holds, under prefix, exactly one object per row of rows
// (row "r<i>" holding "row <i>"), with the asset id results gives and the content's blake3 in
// its metadata, and beside them only the objects in others. It returns each row's key.
func rowObjects(b *testBucket, prefix string, rows []int, others map[string]int64) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		attrs := s.RootModule().Resources[batchRes].Primary.Attributes
		objects := b.objects()
		byRow := map[string]string{}
		for key := range objects {
			if _, ok := others[key]; ok {
				continue
			}
			row := strings.Split(strings.TrimPrefix(key, prefix+"/"), "/")[0]
			if byRow[row] != "" {
				return fmt.Errorf("row %s has two objects: %s and %s", row, byRow[row], key)
			}
			byRow[row] = key
		}
		if len(byRow) != len(rows) || len(objects) != len(rows)+len(others) {
			return fmt.Errorf("the bucket holds %d objects for %d rows (%d in all), want %d rows and %d others", len(byRow), len(byRow), len(objects), len(rows), len(others))
		}
		for _, i := range rows {
			row := fmt.Sprintf("r%d", i)
			key := byRow[row]
			if key == "" || path.Dir(key) != prefix+"/"+row {
				return fmt.Errorf("row %s: no object under %s/%s/", row, prefix, row)
			}
			content, meta, err := b.object(key)
			if err != nil {
				return err
			}
			want := fmt.Sprintf("row %d", i)
			if content != want || meta[bucket.MetaBlake3] != blake3Hex(want) || meta[bucket.MetaAssetID] != attrs["results."+row+".outputs.6.0"] {
				return fmt.Errorf("%s holds %q with metadata %v; want %q, blake3 %s, asset id %s", key, content, meta, want, blake3Hex(want), attrs["results."+row+".outputs.6.0"])
			}
		}
		return nil
	}
}

func rowRange(from, to int) []int {
	var rows []int
	for i := from; i < to; i++ {
		rows = append(rows, i)
	}
	return rows
}

// A 200-row batch into a bucket: an object per row, verified, with its asset id and hash; a
// second apply sends nothing; three objects deleted by hand are drift, seen by one listing and
// restored by downloading those three outputs only; removing five rows deletes their objects
// only; destroying the batch leaves the bucket as it was before.
func TestAccJobBatch_outputDirBucket(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	b := newTestBucket(t, "outputs")
	const prefix = "runs/nightly"
	others := map[string]int64{prefix + "/README.txt": 4, "elsewhere/x.bin": 2}
	b.put(prefix+"/README.txt", "mine")
	b.put("elsewhere/x.bin", "xx")
	config := func(n int) string {
		return batchConfig(srv, batchTextTemplate, batchRowsHCL(n, ""), fmt.Sprintf("output_dir = %q\nmax_in_flight = 32", b.url(prefix)))
	}
	var submits, assets, total int
	deleted := []string{"r3", "r50", "r150"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(200),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 200),
					requestsSince(srv, emulator.OpGetAsset, &assets, 200),
					rowObjects(b, prefix, rowRange(0, 200), others),
					func(*terraform.State) error { total = srv.TotalRequests(); return nil },
				),
			},
			{
				// The second apply: an empty plan, and no request to the service from the
				// refreshes, plans and apply since the first step ended.
				Config: config(200),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					totalRequestsSince(srv, &total, 0),
					func(*terraform.State) error {
						var keys []string
						for key := range b.objects() {
							for _, row := range deleted {
								if strings.HasPrefix(key, prefix+"/"+row+"/") {
									keys = append(keys, key)
								}
							}
						}
						if len(keys) != len(deleted) {
							return fmt.Errorf("found %d objects of rows %v", len(keys), deleted)
						}
						return b.remove(keys...)
					},
				),
				ExpectNonEmptyPlan: true, // three objects were just deleted
			},
			{
				Config: config(200),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r3")),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r50")),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r150")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r4", "status"), knownString("succeeded")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r199", "status"), knownString("succeeded")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					requestsSince(srv, emulator.OpGetAsset, &assets, 3),
					rowObjects(b, prefix, rowRange(0, 200), others),
				),
			},
			{
				Config: config(195),
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					rowObjects(b, prefix, rowRange(0, 195), others),
				),
			},
		},
	})
	got := b.objects()
	if len(got) != len(others) || got[prefix+"/README.txt"] != 4 || got["elsewhere/x.bin"] != 2 {
		t.Fatalf("after destroy the bucket holds %v, want only %v", got, others)
	}
}

// An output_dir naming a bucket is checked at plan: an unknown scheme, a URL that does not
// parse, a misspelled parameter, a bucket that does not exist, credentials it refuses. Each
// error names the bucket (and where the credentials came from), and nothing reaches the
// service.
func TestAccJobBatch_outputDirBucketCheckedAtPlan(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{})
	b := newTestBucket(t, "there")
	for _, tc := range []struct{ dest, err string }{
		{dest: "gs://there/p", err: `unknown scheme "gs"`},
		{dest: "s3://there/p%zz", err: "is not a URL"},
		{dest: b.url("p") + "&regoin=x", err: `unknown query parameter "regoin"`},
		{dest: b.URL("missing", "p"), err: `bucket "missing" does not exist \(s3://missing/p, with credentials from\s+the\s+environment\s+variables\s+AWS_ACCESS_KEY_ID`},
		{dest: b.url("p") + "&anonymous=true", err: `bucket "there" refused the credentials \(s3://there/p; no\s+credentials\s+\(anonymous=true\)\)`},
	} {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config:      batchConfig(srv, batchTextTemplate, batchRowsHCL(2, ""), fmt.Sprintf("output_dir = %q", tc.dest)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid output_dir.*` + strings.ReplaceAll(tc.err, " ", `\s+`) + `.*Nothing was sent`),
			}},
		})
	}
	if n := srv.Requests(emulator.OpSubmitJob); n != 0 {
		t.Fatalf("%d submissions reached the service", n)
	}
}
