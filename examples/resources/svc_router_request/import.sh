# A queued request, by provider/model/request_id.
terraform import svc_router_request.echo demo/echo/0b6f5f6e-8d1c-4f7e-9a55-3f0c2d1e4b7a
