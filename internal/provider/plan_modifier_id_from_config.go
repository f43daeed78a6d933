package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// idFromConfig plans a computed id that is a function of other attributes, so that it is known
// at plan time (and can feed other resources' plans) instead of "known after apply". It only
// fills an unknown plan value: an id held in state is kept by UseStateForUnknown before it. When
// an attribute it needs is unknown or null, the id stays unknown.
type idFromConfig struct {
	from  []string                              // root attribute names, in the order build takes them
	build func(values []string) (string, error) // the id the resource will set on create
	desc  string
}

var _ planmodifier.String = idFromConfig{}

func (m idFromConfig) Description(context.Context) string         { return m.desc }
func (m idFromConfig) MarkdownDescription(context.Context) string { return m.desc }

func (m idFromConfig) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.PlanValue.IsUnknown() || req.Plan.Raw.IsNull() {
		return
	}
	values := make([]string, 0, len(m.from))
	for _, name := range m.from {
		var v types.String
		if d := req.Plan.GetAttribute(ctx, path.Root(name), &v); d.HasError() || v.IsUnknown() || v.IsNull() {
			return
		}
		values = append(values, v.ValueString())
	}
	id, err := m.build(values)
	if err != nil {
		return // the resource reports the problem at apply, where it would fail anyway
	}
	resp.PlanValue = types.StringValue(id)
}

// claimIDFromConfig plans svc_registry_node_claim.id, "publisher_id/node_id".
var claimIDFromConfig = idFromConfig{
	from:  []string{"publisher_id", "node_id"},
	build: func(v []string) (string, error) { return v[0] + "/" + v[1], nil },
	desc:  "The id is publisher_id/node_id, known at plan time.",
}

// translationIDFromConfig plans svc_registry_node_translation.id, the node id.
var translationIDFromConfig = idFromConfig{
	from:  []string{"node_id"},
	build: func(v []string) (string, error) { return v[0], nil },
	desc:  "The id is node_id, known at plan time.",
}

// outputFileIDFromConfig plans svc_output_file.id, the absolute path of path, or for a bucket
// URL the object's s3://bucket/key.
var outputFileIDFromConfig = idFromConfig{
	from:  []string{"path"},
	build: func(v []string) (string, error) { return outputFileID(v[0]) },
	desc:  "The id is the absolute path of path (or the object's s3://bucket/key), known at plan time.",
}
