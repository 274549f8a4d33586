// A chart's download: its own SVG element, or that SVG drawn onto a canvas as a PNG (twice its size, on white).
// Made in the page from what it shows: nothing is fetched, so it works offline and from a file.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-download]");
  if (!link) return;
  event.preventDefault();
  const svg = document.getElementById(link.dataset.chart).querySelector("svg");
  const text = new XMLSerializer().serializeToString(svg);
  const name = link.dataset.chart + "." + link.dataset.download;
  if (link.dataset.download === "svg") {
    save(new Blob([text], {type: "image/svg+xml"}), name);
    return;
  }
  const image = new Image();
  image.onload = () => {
    const box = svg.viewBox.baseVal, scale = 2, canvas = document.createElement("canvas");
    canvas.width = box.width * scale;
    canvas.height = box.height * scale;
    const context = canvas.getContext("2d");
    context.fillStyle = "#fff";
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    canvas.toBlob((blob) => save(blob, name), "image/png");
  };
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
});

function save(blob, name) {
  const url = URL.createObjectURL(blob), link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
