/**
 * Saves a file the page fetched, through an object URL and an `<a download>`: the download needs
 * no URL holding the key, and the CSP, which governs fetches and not downloads, allows it as is.
 */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = filename
  document.body.append(link)
  link.click()
  link.remove()
  // The click has handed the file to the browser's download; the URL is not needed after it.
  setTimeout(() => URL.revokeObjectURL(url), 0)
}
