package provider

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// On a server that says as little as the contract allows (no event stream, progress that does
// not move, Retry-After on every read of a running job), a batch of 1,000 rows, more than the
// server runs at once, reads its jobs no more often than a fixed 2 s poll of each job would: one
// read per 2 s from its submission until the read that finds it ended. (Jobs shorter than the
// poll, which that poll reads once, are read once or twice: the batch reads each near its likely
// end, and reads again a job that ran a little longer than the batch's others.)
func TestAccJobBatch_strictServerReadsWithinAFixedPollsBudget(t *testing.T) {
	t.Parallel()
	const rows, workers = 1000, 100
	srv := newTestServer(t, emulator.Options{Mode: emulator.ModeStrict, Workers: workers, StepDuration: 250 * time.Millisecond, QueueLimit: rows})
	cfg := batchConfig(srv, samplerWorkflowHCL(10), // 10 steps of 250 ms: 2.5 s a job
		fmt.Sprintf(`{ for i in range(%d) : "r${i}" => { "2" = { seed = i } } }`, rows), fmt.Sprintf("max_in_flight = %d", 2*workers))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(batchRes, "succeeded", fmt.Sprint(rows)),
				func(*terraform.State) error {
					budget := 0
					for _, life := range srv.Span(time.Time{}).Lifetimes {
						budget += max(1, int(math.Ceil(life.Seconds()/2)))
					}
					reads := srv.Requests(emulator.OpGetJob)
					t.Logf("%d rows: %d reads; a fixed 2 s poll of each job: %d", rows, reads, budget)
					if reads > budget {
						return fmt.Errorf("%d reads for %d rows, more than the %d of a fixed 2 s poll of each job", reads, rows, budget)
					}
					return nil
				},
			),
		}},
	})
}
