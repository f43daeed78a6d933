# Import by prompt_id. Only the status is recovered: outputs are reported on the socket while
# the prompt runs, so an imported prompt has none.
terraform import svc_prompt.flip 0f6f7b9e-3c1d-4c1e-9a4b-2f0c7d1e5a6b
