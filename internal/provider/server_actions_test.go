package provider

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// actionsServer validates an action's configuration as the framework validates the same
// configuration without its write-only values, which the framework alone refuses on every CLI
// (and Terraform 1.14 and later send): run on any CLI, since it calls the servers directly.
func TestActionsServerValidatesAsTheFrameworkWithoutWriteOnlyValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newSvcProvider("test", time.Now)
	stack := serverStack(p).(tfprotov6.ProviderServerWithActions)                                                      //nolint:staticcheck // the interface actions are served through
	framework := providerserver.NewProtocol6(newSvcProvider("test", time.Now))().(tfprotov6.ProviderServerWithActions) //nolint:staticcheck // as above
	writeOnly := actionWriteOnlyAttributes(ctx, p)
	if len(writeOnly) == 0 {
		t.Fatal("no action has a write-only attribute: this test checks nothing")
	}
	for actionType, a := range writeOnly {
		t.Run(actionType, func(t *testing.T) {
			t.Parallel()
			withSecret, without := map[string]tftypes.Value{}, map[string]tftypes.Value{}
			for name, at := range a.typ.AttributeTypes {
				withSecret[name], without[name] = tftypes.NewValue(at, nil), tftypes.NewValue(at, nil)
			}
			for _, name := range a.names {
				withSecret[name] = tftypes.NewValue(a.typ.AttributeTypes[name], "a secret")
			}
			validate := func(s tfprotov6.ActionServer, attrs map[string]tftypes.Value) []string {
				config, err := tfprotov6.NewDynamicValue(a.typ, tftypes.NewValue(a.typ, attrs))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := s.ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: actionType, Config: &config})
				if err != nil {
					t.Fatal(err)
				}
				return diagnosticLines(resp.Diagnostics)
			}
			refused := validate(framework, withSecret)
			if !slices.ContainsFunc(refused, func(l string) bool { return strings.Contains(l, "Write-only") }) {
				t.Errorf("the framework no longer refuses write-only values (%q): the layer may go", refused)
			}
			if got, want := validate(stack, withSecret), validate(framework, without); !slices.Equal(got, want) {
				t.Errorf("the layer's validation %q, the framework's without write-only values %q", got, want)
			}
		})
	}
}
