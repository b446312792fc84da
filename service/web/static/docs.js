// Starts Swagger UI on the API docs page (/api/v1/docs, service/web/docs.py): a file of its own,
// as the Content-Security-Policy runs no inline script. The document's URL is the page's.
const root = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: root.dataset.url,
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  deepLinking: true,
  validatorUrl: null, // never send the document to another host to be validated
});
