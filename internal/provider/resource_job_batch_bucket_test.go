package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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
			return fmt.Errorf("the bucket holds objects for %d rows (%d objects in all), want %d rows and %d others", len(byRow), len(objects), len(rows), len(others))
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
// second apply sends nothing; three objects deleted by hand, and one written again by hand with
// other content of the same size, are drift, seen by one listing and restored by downloading
// those four outputs only; removing five rows deletes their objects only; destroying the batch
// leaves the bucket as it was before.
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
				Config:           config(200),
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
						for key := range b.objects() {
							if strings.HasPrefix(key, prefix+"/r7/") {
								b.put(key, "row 9") // as long as "row 7"
							}
						}
						return b.remove(keys...)
					},
				),
				ExpectNonEmptyPlan: true, // three objects were just deleted, one written again
			},
			{
				Config: config(200),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r3")),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r50")),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r150")),
					plancheck.ExpectUnknownValue(batchRes, tfjsonPath("results", "r7")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r4", "status"), knownString("succeeded")),
					plancheck.ExpectKnownValue(batchRes, tfjsonPath("results", "r199", "status"), knownString("succeeded")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					requestsSince(srv, emulator.OpGetAsset, &assets, 4),
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

// whenRequested runs f once op has reached srv at least n times, watching the count from a
// goroutine that the test's end stops.
func whenRequested(t *testing.T, srv *emulator.Server, op string, n int, f func()) {
	t.Helper()
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if srv.Requests(op) >= n {
					f()
					return
				}
			}
		}
	}()
}

// The bucket unreachable for 20 s mid-apply (its server stopped as the first output is about
// to be downloaded, started again on the same port 20 s later): the apply rides it out and
// completes with every object there, each row run once.
func TestAccJobBatch_outputDirBucketUnreachable(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{Workers: 4, NodeDuration: 50 * time.Millisecond})
	b := newTestBucket(t, "flaky")
	const rows = 12
	outage := make(chan time.Duration, 1)
	whenRequested(t, srv, emulator.OpGetAsset, 1, func() {
		b.Stop()
		start := time.Now()
		time.Sleep(20 * time.Second) // the outage itself, not a wait for the service
		b.Restart()
		outage <- time.Since(start)
	})
	var submits int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: batchConfig(srv, batchTextTemplate, batchRowsHCL(rows, ""), fmt.Sprintf("output_dir = %q", b.url("out"))),
			Check: resource.ComposeAggregateTestCheckFunc(
				requestsSince(srv, emulator.OpSubmitJob, &submits, rows),
				func(*terraform.State) error {
					select {
					case d := <-outage:
						t.Logf("the bucket was unreachable for %s", d.Round(time.Millisecond))
						return nil
					default:
						return errors.New("the apply ended while the bucket was unreachable")
					}
				},
				rowObjects(b, "out", rowRange(0, rows), nil),
			),
		}},
	})
}

// An upload that fails (the bucket deleted mid-apply) keeps the rows' jobs and results; once
// the bucket is back, the next plan shows the rows' downloads and the apply uploads them
// without running any row again.
func TestAccJobBatch_outputDirBucketFailedUploadKeepsRows(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, emulator.Options{NodeDuration: 100 * time.Millisecond})
	b := newTestBucket(t, "gone-for-a-while")
	const rows = 3
	whenRequested(t, srv, emulator.OpSubmitJob, 1, func() {
		if _, err := b.Client().DeleteBucket(context.Background(), &s3.DeleteBucketInput{Bucket: aws.String(b.name)}); err != nil {
			t.Errorf("deleting the bucket: %v", err)
		}
	})
	config := batchConfig(srv, batchTextTemplate, batchRowsHCL(rows, ""), fmt.Sprintf("output_dir = %q", b.url("p")))
	var submits, assets int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, rows),
					resource.TestCheckResourceAttr(batchRes, "succeeded", fmt.Sprint(rows)),
					resource.TestCheckResourceAttrSet(batchRes, "results.r0.id"),
					func(*terraform.State) error { b.CreateBucket(b.name); return nil },
				),
				ExpectNonEmptyPlan: true, // the objects are missing
			},
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					requestsSince(srv, emulator.OpSubmitJob, &submits, 0),
					requestsSince(srv, emulator.OpGetAsset, &assets, 2*rows), // rows in the first apply, rows again
					rowObjects(b, "p", rowRange(0, rows), nil),
				),
			},
		},
	})
}
