# Adopt a queued request by its model and id. The first apply takes the input from configuration
# in place: the model is not called again.
import {
  to = svc_router_request.echo
  identity = {
    model = "demo/echo"
    id    = "0b6f5f6e-8d1c-4f7e-9a55-3f0c2d1e4b7a"
  }
}
