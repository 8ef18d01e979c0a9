package openapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"path"
)

// SwaggerUIVersion is the version of the npm package swagger-ui-dist vendored in docs/.
const SwaggerUIVersion = "5.35.0"

//go:embed docs
var assets embed.FS

// DocsAssetPrefix is where the viewer's files are served, beside the page.
const DocsAssetPrefix = "/docs/"

// Spec is one document the viewer offers.
type Spec struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

var page = template.Must(template.New("docs").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<link rel="stylesheet" href="{{.Prefix}}swagger-ui.css">
<link rel="icon" type="image/png" href="{{.Prefix}}favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{{.Prefix}}swagger-ui-bundle.js"></script>
<script src="{{.Prefix}}swagger-ui-standalone-preset.js"></script>
<script>
// The key and token typed into Authorize live only as long as the tab (decisions D18): none is
// persisted, what an earlier page persisted is removed, and the browser is asked not to keep
// the fields' values in its form history.
try { localStorage.removeItem("authorized"); } catch (e) {}
new MutationObserver(function () {
  document.querySelectorAll("#swagger-ui input:not([autocomplete])").forEach(function (i) { i.setAttribute("autocomplete", "off"); });
}).observe(document.getElementById("swagger-ui"), {childList: true, subtree: true});
window.ui = SwaggerUIBundle({
  urls: {{.Specs}},
  dom_id: "#swagger-ui",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  persistAuthorization: false,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout"
});
</script>
</body>
</html>
`))

// DocsPage returns the /docs page: Swagger UI over specs (the first is shown first), loading
// only the files of DocsAsset from the same server — no request leaves the sandbox.
func DocsPage(title string, specs []Spec) ([]byte, error) {
	js, err := json.Marshal(specs)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = page.Execute(&b, struct {
		Title, Prefix string
		Specs         template.JS
	}{title, DocsAssetPrefix, template.JS(js)})
	return b.Bytes(), err
}

// DocsAsset returns one of the viewer's files by name (swagger-ui-bundle.js, …) with its
// content type.
func DocsAsset(name string) (body []byte, contentType string, ok bool) {
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
		".png": "image/png", "": "text/plain; charset=utf-8"}
	ct, known := types[path.Ext(name)]
	if !known || name == "" || path.Base(name) != name {
		return nil, "", false
	}
	b, err := assets.ReadFile("docs/" + name)
	if err != nil {
		return nil, "", false
	}
	return b, ct, true
}
