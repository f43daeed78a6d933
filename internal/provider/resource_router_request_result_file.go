package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// noticeResultFileDrift treats a result_path file that is gone or changed as drift, as
// svc_output_file does. A queued request's result can be collected again from the router (a
// replay: no new run, no new charge), so result_path is dropped from state: the plan then shows
// it being set again, and the update writes the file anew. A synchronous call's result cannot
// be fetched again; that is said, and state is left alone.
func (r *routerRequestResource) noticeResultFileDrift(ctx context.Context, state *routerRequestModel, resp *resource.ReadResponse) {
	file := state.ResultPath.ValueString()
	if file == "" || state.ResultSHA256.IsNull() {
		return
	}
	changed, err := resultFileChanged(file, state.ResultSHA256.ValueString())
	switch {
	case err != nil:
		resp.Diagnostics.AddWarning("Result file not checked", fmt.Sprintf("Reading %s to check it still holds the result failed: %v", file, err))
	case !changed:
	case state.Mode.ValueString() == modeSync:
		resp.Diagnostics.AddWarning("Result file gone or changed", fmt.Sprintf("%s no longer holds the result of this synchronous "+
			"call, and a synchronous result cannot be fetched again. Replace the resource to call the model again "+
			"(`terraform apply -replace=<address>`; billed again).", file))
	default:
		logInfo(ctx, "result file gone or changed; the next apply collects the result again", map[string]any{"result_path": file})
		state.ResultPath = types.StringNull()
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("result_path"), types.StringNull())...)
	}
}

// describeRecollectError explains a failed re-collection of a completed result.
func describeRecollectError(err error) string {
	if client.Gone(err) {
		return fmt.Sprintf("The router no longer holds this request's result (it keeps completed requests for 24 hours), "+
			"so result_path cannot be written again without running the model. Replace the resource to run it again "+
			"(`terraform apply -replace=<address>`; billed again), or remove result_path.\n\n%v", err)
	}
	return err.Error()
}

// removeResultFile deletes the file a result was written to, if it still holds that result: a
// file that something else (a replacement created first, say) has since written is not ours.
func removeResultFile(m routerRequestModel) error {
	f := m.ResultPath.ValueString()
	if f == "" || m.ResultSHA256.IsNull() {
		return nil
	}
	if changed, err := resultFileChanged(f, m.ResultSHA256.ValueString()); err != nil || changed {
		return err
	}
	return atomicfile.Remove(f)
}
