package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/svc-org/terraform-provider-svc/internal/journal"
)

// journalKindPrompt is svc_prompt's kind of journal entry.
const journalKindPrompt = "svc_prompt"

// promptDigest is the digest of what decides svc_prompt's run: its workflow (never the partner
// key, a secret).
func promptDigest(plan *promptModel) string {
	return submissionDigest(journalKindPrompt, plan.Workflow.ValueString())
}

// adoptPrompt finds a prompt an earlier run submitted for plan's workflow and never got into
// state, and claims it (ok false when there is none). The v1 interface takes no idempotency key:
// a prompt is journaled only once the service answered with its id, so what is adopted always
// has one and is followed by it, never submitted again. A journal that cannot be used is an
// error in diags: nothing is sent.
func (s *submissionJournal) adoptPrompt(plan *promptModel, diags *diag.Diagnostics) (sub journaled, ok bool) {
	if s == nil {
		return journaled{}, false
	}
	j, err := s.open()
	if err == nil {
		var e journal.Entry
		if e, ok, err = j.Adopt(journalKindPrompt, promptDigest(plan)); ok && e.ID != "" {
			return journaled{s: s, key: e.Key, adopted: true, id: e.ID}, true
		}
	}
	if err != nil {
		diags.AddError("Journal of submissions cannot be used", journalError(err))
	}
	return journaled{}, false
}

// recordPrompt journals the prompt the service answered with id for plan's workflow, durably,
// under a key of its own (the journal's, never sent), so that a run that dies before its state
// is saved leaves the prompt to the next run instead of running the workflow again. A failure is
// only logged: the prompt runs whatever the journal says.
func (s *submissionJournal) recordPrompt(ctx context.Context, plan *promptModel, id string) journaled {
	if s == nil {
		return journaled{}
	}
	sub := journaled{s: s, key: "prompt-" + id, id: id}
	j, err := s.open()
	if err == nil {
		err = j.Put(journal.Entry{Key: sub.key, Kind: journalKindPrompt, Digest: promptDigest(plan), ID: id})
	}
	if err != nil {
		logWarn(ctx, "recording the prompt in the journal failed", map[string]any{"error": err.Error(), "prompt_id": id})
		return journaled{}
	}
	return sub
}

// warnPromptAdopted says that a create took over a prompt an earlier, dead run submitted.
func warnPromptAdopted(diags *diag.Diagnostics, sub journaled) {
	diags.AddWarning("Prompt adopted from the journal",
		fmt.Sprintf("Prompt %s was submitted for this same workflow by an earlier apply that ended before saving it in "+
			"state. This apply follows it instead of running the workflow again. (The v1 socket does not replay, so "+
			"outputs it reported before this apply connected are missed, and outputs_complete is false.)", sub.id))
}
