package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// journalKindJob is svc_job's kind of journal entry.
const journalKindJob = "svc_job"

// jobDigest is the digest of what decides svc_job's job: its workflow and, when configured, its
// idempotency key (never the partner credentials, which are secrets).
func jobDigest(in *jobCreateInput) string {
	return submissionDigest(journalKindJob, in.workflow, in.key)
}

// submitJournaled submits in's workflow through the journal (submitJobJournaled); the key chosen
// is in.key.
func (r *jobResource) submitJournaled(ctx context.Context, data *providerData, in *jobCreateInput, diags *diag.Diagnostics,
) (sub journaled, job *client.Job, err error) {
	sub, job, err = data.submitJobJournaled(ctx, journalKindJob, jobDigest(in), in.key, func(key string) client.SubmitJobInput {
		return client.SubmitJobInput{
			Workflow:       json.RawMessage(in.workflow),
			ExtraData:      data.partnerExtraData(in.apiKeyWO, in.authTokenWO),
			IdempotencyKey: key,
		}
	}, diags)
	in.key = sub.key
	return sub, job, err
}

// submitJobJournaled submits a job of kind through the journal: it first adopts a job an earlier
// run submitted for the same digest and never got into state (a journaled id is read and then
// waited for as any job; a journaled key without an id is resent under that key: the service
// creates the job now, or refuses a key it has seen, an unknown outcome that names it), else
// journals a new key (key, or a drawn one when "") before sending it. A journal that cannot be
// used is an error in diags and nothing is sent.
func (d *providerData) submitJobJournaled(ctx context.Context, kind, digest, key string, input func(key string) client.SubmitJobInput,
	diags *diag.Diagnostics,
) (sub journaled, job *client.Job, err error) {
	for {
		next, jerr := d.journal.begin(kind, digest, key)
		if jerr != nil {
			diags.AddError("Journal of submissions cannot be used", journalError(jerr))
			return next, nil, nil
		}
		sub = next
		if sub.id == "" {
			job, err = d.client.SubmitJob(ctx, input(sub.key))
			if err == nil {
				sub.answered(ctx, job.ID)
			}
			warnAdopted(diags, sub, job)
			return sub, job, err
		}
		job, err = d.client.GetJob(ctx, sub.id)
		if !client.Gone(err) {
			warnAdopted(diags, sub, job)
			return sub, job, err
		}
		// The job an earlier run created is gone from the service: its entry can only submit anew.
		logWarn(ctx, "journaled job no longer exists; submitting anew", map[string]any{"job_id": sub.id})
		sub.drop(ctx)
	}
}

// warnAdopted says that a create took over a job an earlier, dead run submitted.
func warnAdopted(diags *diag.Diagnostics, sub journaled, job *client.Job) {
	if !sub.adopted || job == nil {
		return
	}
	diags.AddWarning("Job adopted from the journal",
		fmt.Sprintf("Job %s was submitted (Idempotency-Key %s) by an earlier apply that ended before saving it in state. "+
			"This apply takes it over instead of running the workflow again.", job.ID, sub.key))
}

// describeJournaledSubmitError is describeSubmitError for a submission under sub's key; when the
// key was an earlier run's, it says why the provider does not draw a new one.
func describeJournaledSubmitError(err error, sub journaled) string {
	text := describeSubmitError(err, sub.key)
	if !sub.adopted {
		return text
	}
	return text + fmt.Sprintf("\n\nIdempotency-Key %s comes from the journal of submissions (%s): an earlier apply sent it and "+
		"ended before its answer arrived, so the service may have run this workflow under it. The journal keeps the key "+
		"(for 24 hours, as the service does), so applying again does not run the workflow a second time either. To run it "+
		"again on purpose, set idempotency_key, or remove the journal (its directory, or its objects in the bucket).", sub.key, sub.s.place)
}
