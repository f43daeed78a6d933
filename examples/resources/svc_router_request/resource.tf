# Queued (default): the request id is in state as soon as the router accepts it; apply waits for
# COMPLETED and keeps a small JSON or text result in `result`.
resource "svc_router_request" "echo" {
  model = "demo/echo"
  input = jsonencode({
    prompt = "a lighthouse at dusk"
    steps  = 20
  })
}

# A binary result is written to a file; its size and sha256 are in state.
resource "svc_router_request" "pixel" {
  model       = "demo/pixel"
  input       = jsonencode({ size = 32, color = "#3366ff" })
  result_path = "${path.module}/out/pixel.png"

  timeouts = {
    create = "15m"
  }
}

# Synchronous: one held call. A 504 deadline_exceeded is collected by resending the same key.
resource "svc_router_request" "sync" {
  model = "demo/freeform"
  mode  = "sync"
  input = jsonencode({ anything = ["goes", "here"] })
}

output "echo" {
  value = jsondecode(svc_router_request.echo.result).echo
}

output "pixel_sha256" {
  value = svc_router_request.pixel.result_sha256
}
