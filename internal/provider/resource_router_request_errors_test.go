package provider

import (
	"strings"
	"testing"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// Spend headers echoed in a router refusal are capped: a 1 MiB header does not make a 1 MiB
// diagnostic.
func TestRouterRefusalEchoesCappedSpend(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("9", 1<<20)
	err := apiError(t, 429, map[string]string{"X-Svc-Error-Type": "rate_limited", "X-Committed-Spend-Remaining": huge,
		"X-Committed-Spend-Limit": huge, "X-Committed-Spend-Current": huge}, `{"detail":"slow down"}`)
	msg := describeRouterCallError(err, client.InvokeInput{Model: "demo/echo"})
	if len(msg) > 4<<10 || !strings.Contains(msg, "truncated") {
		t.Fatalf("a %d-byte message: %.300s", len(msg), msg)
	}
}
