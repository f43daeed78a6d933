# Every model in the router's catalog (all pages).
data "svc_models" "all" {}

# Only one provider's models.
data "svc_models" "demo" {
  model_provider = "demo"
}

# Models whose policy refusals are never charged.
output "free_refusals" {
  value = [for m in data.svc_models.all.models : m.id if m.billing.charges_on_policy_rejection == "no"]
}
