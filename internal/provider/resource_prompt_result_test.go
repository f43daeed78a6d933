package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// outputs_omitted counts the files the wait itself left out (beyond client.MaxPromptOutputs) as
// well as those setResult leaves out.
func TestPromptSetResult_countsOutputsTheWaitDropped(t *testing.T) {
	t.Parallel()
	var m promptModel
	res := &client.PromptResult{PromptID: "p", Status: "success", OutputsComplete: true, OutputsDropped: 7,
		Outputs: []client.PromptOutput{{NodeID: "9", Filename: "a.png", Type: "output", Kind: "images"}}}
	var diags diag.Diagnostics
	(&promptResource{}).setResult(context.Background(), &m, res, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if got := m.OutputsOmitted.ValueInt64(); got != 7 {
		t.Fatalf("outputs_omitted = %d, want 7", got)
	}
	if n := len(m.Outputs.Elements()); n != 1 {
		t.Fatalf("%d outputs, want 1", n)
	}
}
