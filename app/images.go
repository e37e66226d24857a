package app

import (
	"container/list"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/store"
)

// A document's own images, served from /images/<sha256>.<ext> (spec "Images
// a tool made"): only to a reader of a document that holds the image, with
// its own Content-Type, nosniff and a sandbox content security policy. The
// store holds nothing but raster types a browser draws, and this handler
// serves nothing else, so no SVG or HTML is ever served from here.

// imageCSP keeps anything a browser might still find in the bytes inert.
const imageCSP = "sandbox; default-src 'none'"

// imageCacheControl: an image's address is its content's hash, so it never
// changes; private, since only the document's readers may see it.
const imageCacheControl = "private, max-age=31536000, immutable"

// servedImageTypes are the only Content-Types /images/ answers with.
var servedImageTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true,
	"image/avif": true, "image/bmp": true, "image/x-icon": true,
}

// thumbnailWidths are the widths /images/ serves a smaller copy at
// (?w=360 and so on), Slack's thumbnail widths: a bounded set, so the
// copies a server keeps are bounded too.
var thumbnailWidths = []int{64, 80, 160, 360, 480, 720, 960, 1024}

var errImageNotFound = httpError(http.StatusNotFound, "image-not-found", "There is no such image, or it belongs to no document you can read.")

func (a *App) handleImage(c echo.Context) error {
	if a.callerOf(c) == anonymous {
		return errSignInRequired
	}
	sha, ext, ok := strings.Cut(c.Param("file"), ".")
	if !ok || !isSHA256Hex(sha) || ext == "" {
		return errImageNotFound
	}
	width := 0
	if w := c.QueryParam("w"); w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || !slices.Contains(thumbnailWidths, n) {
			return badRequest("invalid-width", "w must be one of the thumbnail widths "+thumbnailWidthList()+".")
		}
		width = n
	}
	img, holders, err := a.store.ImageByHash(c.Request().Context(), sha)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errImageNotFound
		}
		return err
	}
	if img.Ext != ext || !a.canRead(c, holders) || !servedImageTypes[img.MimeType] {
		return errImageNotFound
	}

	etag := `"` + sha + `"`
	mime, data := img.MimeType, img.Data
	if width > 0 {
		etag = `"` + sha + "-w" + strconv.Itoa(width) + `"`
		mime, data = a.thumbnail(img, width)
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", imageCSP)
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", imageCacheControl)
	h.Set("ETag", etag)
	if c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, mime, data)
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func thumbnailWidthList() string {
	var ws []string
	for _, w := range thumbnailWidths {
		ws = append(ws, strconv.Itoa(w))
	}
	return strings.Join(ws, ", ")
}

// thumbnail is img at most width wide: from the cache, made now, or the
// image itself when no smaller copy is right (see picture.Thumbnail).
func (a *App) thumbnail(img store.Image, width int) (mime string, data []byte) {
	key := img.SHA256 + "-" + strconv.Itoa(width)
	if t, ok := thumbnails.get(key); ok {
		return t.mime, t.data
	}
	thumbnails.work <- struct{}{} // a few at a time: each decode holds the whole picture
	defer func() { <-thumbnails.work }()
	if t, ok := thumbnails.get(key); ok { // made while this one waited
		return t.mime, t.data
	}
	t, ok, err := picture.Thumbnail(picture.Image{SHA256: img.SHA256, Ext: img.Ext, MimeType: img.MimeType,
		Width: img.Width, Height: img.Height, Data: img.Data}, width)
	if err != nil {
		a.log.Warn("make thumbnail", "image", img.SHA256, "width", width, "err", err)
	}
	if err != nil || !ok {
		// The image itself; it is in the store, so the cache keeps no copy.
		return img.MimeType, img.Data
	}
	thumbnails.put(key, cachedThumbnail{mime: t.MimeType, data: t.Data})
	return t.MimeType, t.Data
}

// thumbnails keeps recent thumbnails in memory, at most maxThumbnailBytes.
// It is shared by every App in the process: a key is a content hash and a
// width, so a thumbnail is the same whichever App made it, and the caller's
// access is checked before the cache is read.
var thumbnails = &thumbnailCache{
	max:   maxThumbnailBytes,
	order: list.New(),
	items: map[string]*list.Element{},
	work:  make(chan struct{}, 2),
}

const maxThumbnailBytes = 32 << 20

type cachedThumbnail struct {
	key  string
	mime string
	data []byte
}

// thumbnailCache is a least-recently-used cache bounded by bytes.
type thumbnailCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of cachedThumbnail, most recent first
	items map[string]*list.Element
	work  chan struct{} // bounds the thumbnails being made at once
}

func (tc *thumbnailCache) get(key string) (cachedThumbnail, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.items[key]
	if !ok {
		return cachedThumbnail{}, false
	}
	tc.order.MoveToFront(e)
	return e.Value.(cachedThumbnail), true
}

func (tc *thumbnailCache) put(key string, t cachedThumbnail) {
	if len(t.data) > tc.max/4 {
		return // one huge thumbnail would evict everything else
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if _, ok := tc.items[key]; ok {
		return
	}
	t.key = key
	tc.items[key] = tc.order.PushFront(t)
	tc.size += len(t.data)
	for tc.size > tc.max {
		last := tc.order.Back()
		old := tc.order.Remove(last).(cachedThumbnail)
		delete(tc.items, old.key)
		tc.size -= len(old.data)
	}
}
