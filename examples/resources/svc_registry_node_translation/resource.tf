# Translations are a JSON object of language code to an object of translated
# fields. Create and every change post them; destroy only removes the resource
# from state (the registry keeps the translations).
resource "svc_registry_node_translation" "upscaler" {
  node_id = "acme-upscaler"
  data = jsonencode({
    fr = { title = "Agrandisseur", description = "Agrandit une image sans perte de détails." }
    de = { title = "Hochskalierer", description = "Vergrößert ein Bild ohne Detailverlust." }
  })
}
