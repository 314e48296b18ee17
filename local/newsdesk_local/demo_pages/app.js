/* The demo's client-rendered article page: the HTML has an empty #root; this bundle fetches
   the article as JSON and draws it. Served as is (no template). */
(function () {
  "use strict";
  var config = window.__APP_CONFIG__ || {};
  var root = document.getElementById("root");
  if (!root || !config.apiBase) {
    return;
  }
  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text) {
      node.textContent = text;
    }
    return node;
  }
  fetch(config.apiBase + config.articlePath + ".json", { credentials: "same-origin" })
    .then(function (response) {
      if (!response.ok) {
        throw new Error("HTTP " + response.status);
      }
      return response.json();
    })
    .then(function (article) {
      var wrap = element("article", "article-view");
      wrap.appendChild(element("h1", "article-title", article.title));
      wrap.appendChild(element("p", "article-byline", article.byline + " · " + article.published));
      var body = element("div", "article-body");
      article.paragraphs.forEach(function (text) {
        body.appendChild(element("p", null, text));
      });
      wrap.appendChild(body);
      root.appendChild(wrap);
    })
    .catch(function () {
      root.appendChild(element("p", "article-error", "기사를 불러오지 못했습니다."));
    });
})();
