package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// batchCheckRows is how many rows a problem of the batch's check names; the rest are counted.
const batchCheckRows = 3

// checkBatchRowsAtPlan checks, before anything is sent, the workflow of each row an apply
// submits against the service's node classes, as svc_job's check does one workflow, and one
// thing more that only a row can get wrong: an override of an input that neither the
// template's node nor its class has. The engine ignores such an input, so a misspelled name
// would run every row with the template's value. One error per problem names the node, its
// class and the first rows that have it. Like svc_job's check, it is skipped with a warning
// when object_info cannot be read for a reason that may pass.
func (d *providerData) checkBatchRowsAtPlan(ctx context.Context, template string, rows []batchRowInput, diags *diag.Diagnostics) {
	if d == nil || d.configUnknown || len(rows) == 0 {
		return
	}
	base, err := workflow.Parse([]byte(template))
	if err != nil {
		return // the attribute's validator reports it
	}
	info, defs, ok := d.nodeClassesAtPlan(ctx, path.Root("rows"), submitsElsewhere, diags)
	if !ok {
		return
	}
	byProblem := map[batchRowProblem][]string{}
	for _, row := range rows {
		graph, err := workflow.Parse(row.workflow)
		if err != nil {
			continue
		}
		for id, problems := range checkWorkflowNodes(info, defs, graph) {
			for _, problem := range problems {
				p := batchRowProblem{id, graph[id].ClassType, problem}
				byProblem[p] = append(byProblem[p], row.key)
			}
		}
		for _, p := range undeclaredOverrides(defs, base, graph) {
			byProblem[p] = append(byProblem[p], row.key)
		}
	}
	for _, p := range slices.SortedFunc(maps.Keys(byProblem), batchRowProblem.compare) {
		diags.AddAttributeError(path.Root("rows"), fmt.Sprintf("Rows would be rejected: node %q", p.node),
			fmt.Sprintf("Node %q (%s): %s, in %s.\n\nNothing was sent. The check uses the service's GET /api/object_info; "+
				"set validate = false to submit anyway.", p.node, p.class, p.problem, rowsNamed(byProblem[p])))
	}
}

// batchRowProblem is one thing the check found wrong with a node of a row's workflow.
type batchRowProblem struct{ node, class, problem string }

func (p batchRowProblem) compare(q batchRowProblem) int {
	return strings.Compare(p.node+"\x00"+p.problem, q.node+"\x00"+q.problem)
}

// undeclaredOverrides are the inputs a row sets that neither the template's node has nor the
// node's class declares: the engine would ignore them. A node of a class that defs does not
// know (or could not read) is not judged here: it carries its own error.
func undeclaredOverrides(defs workflow.ClassDefs, template, row workflow.Graph) []batchRowProblem {
	var problems []batchRowProblem
	for id, n := range row {
		def := defs[n.ClassType]
		if def == nil || def.Err != nil {
			continue
		}
		for name := range n.Inputs {
			if _, inTemplate := template[id].Inputs[name]; inTemplate {
				continue
			}
			if _, declared := def.Input(name); !declared {
				problems = append(problems, batchRowProblem{id, n.ClassType,
					fmt.Sprintf("input %q is not one of %s's (%s)", name, n.ClassType, declaredInputs(def))})
			}
		}
	}
	return problems
}

func declaredInputs(def *workflow.ClassDef) string {
	names := make([]string, 0, len(def.Inputs))
	for _, in := range def.Inputs {
		names = append(names, in.Name)
	}
	return strings.Join(names, ", ")
}

// rowsNamed is `rows["a"]`, `rows["a"] and rows["b"]`, or the first batchCheckRows and a count.
func rowsNamed(keys []string) string {
	slices.Sort(keys)
	named := make([]string, 0, batchCheckRows)
	for _, k := range keys[:min(len(keys), batchCheckRows)] {
		named = append(named, fmt.Sprintf("rows[%q]", k))
	}
	s := strings.Join(named, ", ")
	if more := len(keys) - len(named); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
