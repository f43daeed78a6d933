package provider

import (
	"context"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// submitGrace is how long a submission already on the wire may take to be answered once the
// apply is stopped (Ctrl-C, SIGTERM) or times out, so that the id of a job the service created
// reaches state. Runners kill Terraform 7.5 to 10 s after their first signal, and the whole stop
// must end within 5 s on a loaded machine: 2 s leaves room for the state to be written.
const submitGrace = 2 * time.Second

// outlivingInterrupt is the context of submissions made under ctx. Once ctx ends, nothing is
// sent that was not already on the wire (a submission held while the service is down, waiting
// to be resent, or not yet begun fails as not sent, or, when an earlier attempt may have
// arrived, as an unknown outcome naming its key); an attempt on the wire gets submitGrace for
// its answer. stop releases it, and must be called once the submissions have returned.
func outlivingInterrupt(ctx context.Context) (submitCtx context.Context, stop context.CancelFunc) {
	return client.AnswerGrace(ctx, submitGrace)
}
