# Adopt a prompt by its id. Only the status is recovered (outputs were reported on the socket
# while it ran); the first apply takes the workflow from configuration in place, running nothing.
import {
  to = svc_prompt.flip
  identity = {
    id = "0f6f7b9e-3c1d-4c1e-9a4b-2f0c7d1e5a6b"
  }
}
