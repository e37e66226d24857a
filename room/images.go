package room

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/HugoSmits86/nativewebp"
	"golang.org/x/image/bmp"
	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// A document's own images: the pictures a tool made (spec "Images a tool
// made") and the ones the Planner uploads with upload_plan_image (spec
// "Option previews"). Everything here is a pure function of bytes: it tells
// what an image really is from its bytes, refuses what a browser would not
// draw as a raster, and makes a smaller copy of one that is too large. The
// caller stores the result and serves it; decoding and encoding are CPU
// work, so call these outside the room's lock.

// Image is an image ready to keep: its bytes as they are to be stored and
// what they are. It is addressed by the SHA-256 of Data.
type Image struct {
	SHA256   string // lowercase hex SHA-256 of Data
	Ext      string // png, jpg, webp, gif, avif, bmp or ico
	MimeType string // the type the bytes are
	Width    int    // as a browser shows it (a JPEG's EXIF rotation applied)
	Height   int
	Data     []byte
}

// Path is where the browser loads the image: /images/<sha256>.<ext>.
func (img Image) Path() string { return "/images/" + img.SHA256 + "." + img.Ext }

const (
	// MaxImageSide is the longest side, in pixels, of an image Chopin keeps;
	// a larger one is stored as a smaller copy.
	MaxImageSide = 4096
	// MaxImagePixels bounds the images Chopin decodes to make a smaller copy
	// or a thumbnail (about 200 MB of memory as RGBA).
	MaxImagePixels = 50_000_000
	// MaxUploadImageBytes is the most decoded bytes upload_plan_image takes.
	MaxUploadImageBytes = 16 << 20
	// UploadStoredImageBytes is the most bytes an uploaded image is stored
	// with; a larger one is stored as a smaller copy of itself.
	UploadStoredImageBytes = 1 << 20
	// jpegQuality is the quality of a JPEG's smaller copy and thumbnails.
	jpegQuality = 85
)

// imageType is one of the raster types a browser draws that Chopin keeps.
type imageType struct {
	mime, ext, name string
	decode          func(io.Reader) (image.Image, error) // nil: Chopin cannot decode it
}

var (
	typePNG  = &imageType{"image/png", "png", "a PNG", png.Decode}
	typeJPEG = &imageType{"image/jpeg", "jpg", "a JPEG", jpeg.Decode}
	typeWebP = &imageType{"image/webp", "webp", "a WebP", webp.Decode}
	typeGIF  = &imageType{"image/gif", "gif", "a GIF", gif.Decode} // the first frame
	typeAVIF = &imageType{"image/avif", "avif", "an AVIF", nil}
	typeBMP  = &imageType{"image/bmp", "bmp", "a BMP", bmp.Decode}
	typeICO  = &imageType{"image/x-icon", "ico", "an ICO", nil}
)

// imageTypeNames maps every name a tool may give a type to the type whose
// bytes it means. The usual other names are read as the type their bytes
// are: an APNG is a PNG, image/jpg a JPEG.
var imageTypeNames = map[string]*imageType{
	"image/png": typePNG, "image/apng": typePNG, "image/x-png": typePNG, "image/vnd.mozilla.apng": typePNG,
	"image/jpeg": typeJPEG, "image/jpg": typeJPEG, "image/pjpeg": typeJPEG,
	"image/webp": typeWebP,
	"image/gif":  typeGIF,
	"image/avif": typeAVIF,
	"image/bmp":  typeBMP, "image/x-ms-bmp": typeBMP, "image/x-bmp": typeBMP,
	"image/x-icon": typeICO, "image/vnd.microsoft.icon": typeICO, "image/ico": typeICO, "image/icon": typeICO,
}

// uploadTypes are the types upload_plan_image takes, exactly as named.
var uploadTypes = map[string]*imageType{
	"image/png": typePNG, "image/jpeg": typeJPEG, "image/webp": typeWebP, "image/gif": typeGIF,
}

// lookupImageType reads a mimeType as a tool wrote it: case and parameters
// (image/PNG; charset=binary) do not matter.
func lookupImageType(name string) *imageType {
	name, _, _ = strings.Cut(name, ";")
	return imageTypeNames[strings.ToLower(strings.TrimSpace(name))]
}

// Why an image's bytes are not what it says they are.
type bytesProblem int

const (
	bytesOK        bytesProblem = iota
	bytesNotType                // not an image of the named type
	bytesOtherType              // an image of another type
	bytesCutShort               // the named type, cut short
)

// badBytes is a bytesProblem with what it found.
type badBytes struct {
	problem bytesProblem
	named   *imageType
	found   *imageType // for bytesOtherType
}

func (b *badBytes) Error() string {
	switch b.problem {
	case bytesOtherType:
		return fmt.Sprintf("its bytes are %s image, not %s", b.found.name, b.named.name)
	case bytesCutShort:
		return fmt.Sprintf("its bytes are cut short, not a whole %s image", strings.TrimPrefix(strings.TrimPrefix(b.named.name, "a "), "an "))
	}
	return fmt.Sprintf("its bytes are not %s image", b.named.name)
}

// tooManyPixels says an image needs a smaller copy that Chopin cannot make.
type tooManyPixels struct{ width, height int }

func (e *tooManyPixels) Error() string {
	return fmt.Sprintf("it is more pixels than Chopin can make smaller (%d × %d)", e.width, e.height)
}

// sniffImage tells the type of data from its bytes alone, or nil.
func sniffImage(data []byte) *imageType {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return typePNG
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return typeJPEG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return typeGIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return typeWebP
	case isAVIF(data):
		return typeAVIF
	case len(data) >= 18 && string(data[:2]) == "BM" && validBMPHeader(binary.LittleEndian.Uint32(data[14:18])):
		return typeBMP
	case len(data) >= 6 && bytes.HasPrefix(data, []byte{0, 0, 1, 0}) && binary.LittleEndian.Uint16(data[4:6]) > 0:
		return typeICO
	}
	return nil
}

// readImage checks that data is an image of type named and reads its size
// as a browser shows it. It returns the type the bytes are, which for
// aliases is the canonical one.
func readImage(named *imageType, data []byte) (w, h int, err error) {
	found := sniffImage(data)
	if found == nil {
		return 0, 0, &badBytes{problem: bytesNotType, named: named}
	}
	if found != named {
		return 0, 0, &badBytes{problem: bytesOtherType, named: named, found: found}
	}
	cutShort := &badBytes{problem: bytesCutShort, named: named}
	notType := &badBytes{problem: bytesNotType, named: named}
	var cfg image.Config
	switch named {
	case typePNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
		if err == nil && !bytes.Contains(data, []byte("IEND\xaeB`\x82")) {
			return 0, 0, cutShort
		}
	case typeJPEG:
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
		if err == nil && !bytes.Contains(data[2:], []byte{0xFF, 0xD9}) {
			return 0, 0, cutShort
		}
		if err == nil && jpegOrientation(data) >= 5 {
			cfg.Width, cfg.Height = cfg.Height, cfg.Width
		}
	case typeGIF:
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
		// The trailer byte ends a whole GIF (padding after it is harmless).
		if trimmed := bytes.TrimRight(data, "\x00"); err == nil && trimmed[len(trimmed)-1] != 0x3B {
			return 0, 0, cutShort
		}
	case typeWebP:
		if 8+int64(binary.LittleEndian.Uint32(data[4:8])) > int64(len(data)) {
			return 0, 0, cutShort
		}
		cfg, err = webp.DecodeConfig(bytes.NewReader(data))
	case typeAVIF:
		cfg.Width, cfg.Height, err = avifSize(data)
	case typeBMP:
		cfg.Width, cfg.Height, err = bmpSize(data)
	case typeICO:
		cfg.Width, cfg.Height, err = icoSize(data)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, errCutShort):
		return 0, 0, cutShort
	case err != nil:
		return 0, 0, notType
	case cfg.Width <= 0 || cfg.Height <= 0:
		return 0, 0, notType
	}
	return cfg.Width, cfg.Height, nil
}

var errCutShort = errors.New("cut short")

// keepImage makes the Image to store from bytes of type t and size w×h:
// the bytes themselves when they fit maxBytes and MaxImageSide, else a
// smaller copy (at most MaxImageSide on its longest side, then narrower
// until it fits): a JPEG stays a JPEG, anything else becomes a WebP, which
// keeps transparency.
func keepImage(t *imageType, data []byte, w, h int, maxBytes int64) (Image, error) {
	if int64(len(data)) <= maxBytes && max(w, h) <= MaxImageSide {
		return newImage(t, data, w, h), nil
	}
	src, err := decodeImage(t, data, w, h)
	if err != nil {
		return Image{}, err
	}
	out := typeWebP
	if t == typeJPEG {
		out = typeJPEG
	}
	factor := min(1, float64(MaxImageSide)/float64(max(w, h)))
	if t == typePNG || t == typeWebP || t == typeGIF {
		// Already compressed without loss: a lossless WebP of the same
		// pixels is about as large, so aim under the limit at once rather
		// than encode the whole picture to learn that (each encode of a
		// large picture costs seconds).
		factor = min(factor, math.Sqrt(float64(maxBytes)/float64(len(data)))*0.95)
	}
	for range 12 {
		tw, th := max(1, int(math.Round(float64(w)*factor))), max(1, int(math.Round(float64(h)*factor)))
		enc, err := encodeImage(out, resize(src, tw, th))
		if err != nil {
			return Image{}, err
		}
		if int64(len(enc)) <= maxBytes {
			return newImage(out, enc, tw, th), nil
		}
		if tw == 1 && th == 1 {
			break
		}
		// Bytes grow with the pixels: aim under the limit with a margin.
		factor *= math.Sqrt(float64(maxBytes)/float64(len(enc))) * 0.95
	}
	return Image{}, errors.New("no smaller copy fits")
}

func newImage(t *imageType, data []byte, w, h int) Image {
	sum := sha256.Sum256(data)
	return Image{SHA256: hex.EncodeToString(sum[:]), Ext: t.ext, MimeType: t.mime, Width: w, Height: h, Data: data}
}

// decodeImage decodes bytes readImage accepted, as a browser shows them
// (a JPEG's EXIF rotation applied). w and h are that size.
func decodeImage(t *imageType, data []byte, w, h int) (image.Image, error) {
	if t.decode == nil || int64(w)*int64(h) > MaxImagePixels {
		return nil, &tooManyPixels{w, h}
	}
	img, err := t.decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", t.ext, err)
	}
	if t == typeJPEG {
		img = orient(img, jpegOrientation(data))
	}
	return img, nil
}

// resize scales src to w×h with Catmull-Rom, which averages the pixels it
// drops rather than skipping them.
func resize(src image.Image, w, h int) image.Image {
	b := src.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, b, xdraw.Src, nil)
	return dst
}

func encodeImage(t *imageType, img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch t {
	case typeJPEG:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	case typeWebP:
		err = nativewebp.Encode(&buf, img, nil)
	default:
		err = fmt.Errorf("cannot encode %s", t.ext)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t.ext, err)
	}
	return buf.Bytes(), nil
}

// ThumbnailWidths are the widths /images/ serves a smaller copy at
// (?w=360 and so on), Slack's thumbnail widths: a bounded set, so the
// copies a server keeps are bounded too.
var ThumbnailWidths = []int{64, 80, 160, 360, 480, 720, 960, 1024}

// Thumbnail is img at most width pixels wide, for ?w=. ok is false when
// the image itself is what to serve: it is no wider, or a smaller copy
// would lose what it is (an animation) or cannot be made (AVIF, ICO). A
// JPEG's thumbnail is a JPEG; any other is a WebP, which keeps
// transparency.
func Thumbnail(img Image, width int) (thumb Image, ok bool, err error) {
	t := imageTypeNames[img.MimeType]
	if t == nil || width <= 0 || width >= img.Width || t.decode == nil || animated(t, img.Data) {
		return Image{}, false, nil
	}
	src, err := decodeImage(t, img.Data, img.Width, img.Height)
	var tmp *tooManyPixels
	if errors.As(err, &tmp) {
		return Image{}, false, nil
	}
	if err != nil {
		return Image{}, false, err
	}
	h := max(1, int(math.Round(float64(img.Height)*float64(width)/float64(img.Width))))
	out := typeWebP
	if t == typeJPEG {
		out = typeJPEG
	}
	enc, err := encodeImage(out, resize(src, width, h))
	if err != nil {
		return Image{}, false, err
	}
	return newImage(out, enc, width, h), true, nil
}

// animated reports whether the image moves; its first frame alone would
// misrepresent it. A GIF is taken to move: checking costs a full decode,
// and GIFs are small.
func animated(t *imageType, data []byte) bool {
	switch t {
	case typeGIF:
		return true
	case typePNG: // an APNG has an acTL chunk before its first IDAT
		i, j := bytes.Index(data, []byte("acTL")), bytes.Index(data, []byte("IDAT"))
		return i >= 0 && (j < 0 || i < j)
	case typeWebP: // VP8X with the animation flag
		return len(data) >= 21 && string(data[12:16]) == "VP8X" && data[20]&0x02 != 0
	}
	return false
}

// Refusal codes of an image block Chopin will not host, with the reasons
// the spec gives. Each entry's sentence starts "Image couldn't be shown:".
const (
	RefusedUnsupportedType = "unsupported-type" // its type is not one Chat shows
	RefusedNotBase64       = "not-base64"       // its data is not base64
	RefusedWrongBytes      = "wrong-bytes"      // its bytes are not the type it names, another type, or cut short
	RefusedNoData          = "no-data"          // its block has no data or type
	RefusedTooLarge        = "too-large"        // it did not fit one message (tooLarge)
	RefusedNotStored       = "not-stored"       // Chopin could not store it
	RefusedTooManyPixels   = "too-many-pixels"  // more pixels than Chopin can make smaller
	refusedPrefix          = "Image couldn't be shown: "
)

// RefusedImage is one entry of a message's refusedImages: why an image
// block is not shown, and Before, how many of the message's images come
// before it. Code is for logs and tests; the wire carries the sentence.
type RefusedImage struct {
	Code   string `json:"-"`
	Reason string `json:"reason"`
	Before int    `json:"before"`
}

func refuse(code, why string) *RefusedImage {
	return &RefusedImage{Code: code, Reason: refusedPrefix + why + "."}
}

// ToolImage is one image block of a tool's result: the Image to store, or
// why it is refused. Alt and Caption are kept as given (nil when absent or
// not a string).
type ToolImage struct {
	Image   Image
	Alt     *string
	Caption *string
	Refused *RefusedImage
}

// NotStored marks an image the caller could not store: it is refused with
// the spec's reason, which gives no detail of the failure (log that).
func (ti *ToolImage) NotStored() {
	ti.Refused = refuse(RefusedNotStored, "Chopin could not store it")
}

// ToolResultContent is what a tool's result holds in its content array:
// the text blocks and every image block, in the order of the blocks.
type ToolResultContent struct {
	Text   []string
	Images []ToolImage
}

// ReadToolResult reads the content array of an own tool's final successful
// result (the object, or its JSON text): the text blocks, and each image
// block checked and, when larger than maxStoredBytes or MaxImageSide, made
// smaller. ok is false when the result has no content array: it is shown
// as it is. A preliminary or failed result shows no images: do not call it
// for one.
func ReadToolResult(result json.RawMessage, maxStoredBytes int64) (content ToolResultContent, ok bool) {
	var text string
	if json.Unmarshal(result, &text) == nil {
		result = json.RawMessage(text)
	}
	var shape struct {
		Content []json.RawMessage `json:"content"`
	}
	if json.Unmarshal(result, &shape) != nil || shape.Content == nil {
		return content, false
	}
	for _, raw := range shape.Content {
		var block map[string]json.RawMessage
		if json.Unmarshal(raw, &block) != nil {
			continue
		}
		typ := jsonString(block["type"])
		if typ == nil {
			continue
		}
		switch *typ {
		case "text":
			if s := jsonString(block["text"]); s != nil {
				content.Text = append(content.Text, *s)
			}
		case "image":
			content.Images = append(content.Images, readImageBlock(block, maxStoredBytes))
		}
	}
	return content, true
}

func jsonString(raw json.RawMessage) *string {
	var s string
	if raw == nil || string(raw) == "null" || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// readImageBlock checks one image block and makes what to store.
func readImageBlock(block map[string]json.RawMessage, maxStoredBytes int64) ToolImage {
	ti := ToolImage{Alt: jsonString(block["alt"]), Caption: jsonString(block["caption"])}
	// A block with tooLarge is never stored, whatever else it holds.
	if raw, ok := block["tooLarge"]; ok && string(raw) != "null" {
		why := "it did not fit in one message"
		var n float64
		if json.Unmarshal(raw, &n) == nil && n > 0 {
			why += fmt.Sprintf(" (%s)", megabytes(int64(n)))
		}
		ti.Refused = refuse(RefusedTooLarge, why)
		return ti
	}
	data, mimeType := jsonString(block["data"]), jsonString(block["mimeType"])
	if data == nil || *data == "" || mimeType == nil || strings.TrimSpace(*mimeType) == "" {
		ti.Refused = refuse(RefusedNoData, "its block has no data or type")
		return ti
	}
	t := lookupImageType(*mimeType)
	if t == nil {
		ti.Refused = refuse(RefusedUnsupportedType, fmt.Sprintf("its type, %s, is not one Chat shows", shownType(*mimeType)))
		return ti
	}
	raw, err := decodeBase64(*data)
	if err != nil {
		ti.Refused = refuse(RefusedNotBase64, "its data is not base64")
		return ti
	}
	img, refusal := prepareImage(t, raw, maxStoredBytes)
	ti.Image, ti.Refused = img, refusal
	return ti
}

// prepareImage checks raw against type t and makes what to store.
func prepareImage(t *imageType, raw []byte, maxStoredBytes int64) (Image, *RefusedImage) {
	w, h, err := readImage(t, raw)
	if err != nil {
		return Image{}, refuse(RefusedWrongBytes, err.Error())
	}
	img, err := keepImage(t, raw, w, h, maxStoredBytes)
	var tmp *tooManyPixels
	switch {
	case errors.As(err, &tmp):
		return Image{}, refuse(RefusedTooManyPixels, err.Error())
	case err != nil:
		return Image{}, refuse(RefusedNotStored, "Chopin could not store it")
	}
	return img, nil
}

// decodeBase64 reads standard base64 with or without its = padding (line
// breaks are skipped, as the standard decoder does).
func decodeBase64(s string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=\r\n"))
}

// shownType is a tool's mimeType fit to quote in a sentence.
func shownType(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if utf8.RuneCountInString(s) > 64 {
		s = string([]rune(s)[:64]) + "…"
	}
	return s
}

func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// PlaceImages lays out a turn's image blocks on its message: shown are the
// images to show, in order, and refused the refusedImages entries, one per
// refused block in the order of the blocks, each with Before counted from
// before, the number of the message's images already shown.
func PlaceImages(images []ToolImage, before int) (shown []ToolImage, refused []RefusedImage) {
	for _, ti := range images {
		if ti.Refused != nil {
			r := *ti.Refused
			r.Before = before + len(shown)
			refused = append(refused, r)
			continue
		}
		shown = append(shown, ti)
	}
	return shown, refused
}

// The upload_plan_image host tool (spec "Option previews"), offered only to
// a client that asked for decision-option-previews.

// ToolUploadPlanImage is the name of the upload_plan_image host tool.
const ToolUploadPlanImage = "upload_plan_image"

// UploadPlanImageTool is its spec as a turn offers it.
var UploadPlanImageTool = ToolSpec{
	Name: ToolUploadPlanImage,
	Description: "Store an image you made (a PNG, JPEG, WebP or GIF, at most 16 MiB) in this document's own images and get the Markdown that shows it: " +
		"use it in an option's preview, a question's body or the plan. The same bytes give the same path. " +
		"alt is required: one line of at most 200 characters saying what the image shows. An image over 1 MiB is stored as a smaller copy of itself.",
	InputSchema: json.RawMessage(`{"type":"object","required":["data","mimeType","alt"],"properties":{` +
		`"data":{"type":"string","description":"The image's bytes in standard base64, at most 16 MiB decoded."},` +
		`"mimeType":{"type":"string","enum":["image/png","image/jpeg","image/webp","image/gif"]},` +
		`"alt":{"type":"string","minLength":1,"maxLength":200,"description":"What the image shows, in words, on one line."}` +
		`},"additionalProperties":false}`),
}

// UploadImageArgs is upload_plan_image's input.
type UploadImageArgs struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Alt      string `json:"alt"`
}

// UploadImageResult is upload_plan_image's output.
type UploadImageResult struct {
	Path     string `json:"path"`
	Markdown string `json:"markdown"`
}

// MaxImageAlt is the most characters (code points) an image's alt holds.
const MaxImageAlt = 200

// PrepareUpload checks upload_plan_image's input and makes the Image to
// store: the bytes themselves, or a smaller copy when they are over
// min(UploadStoredImageBytes, maxStoredBytes) or MaxImageSide. The same
// bytes always give the same Image. The caller checks the document and
// the turn, stores the image and answers with UploadResult.
func PrepareUpload(args UploadImageArgs, maxStoredBytes int64) (Image, error) {
	if err := checkAlt(args.Alt); err != nil {
		return Image{}, err
	}
	t := uploadTypes[args.MimeType]
	if t == nil {
		return Image{}, errorf(CodeUnsupportedImage, "mimeType must be image/png, image/jpeg, image/webp or image/gif; it was %q.", shownType(args.MimeType))
	}
	if base64.StdEncoding.DecodedLen(len(args.Data)) > MaxUploadImageBytes+3 {
		return Image{}, errorf(CodeImageTooLarge, "The image is over 16 MiB (16777216 bytes), the most upload_plan_image takes. Make it smaller and upload it again.")
	}
	raw, err := decodeBase64(args.Data)
	if err != nil || len(raw) == 0 {
		return Image{}, errorf(CodeInvalidArgument, "data must be the image's bytes in standard base64.")
	}
	if len(raw) > MaxUploadImageBytes {
		return Image{}, errorf(CodeImageTooLarge, "The image is %d bytes, over 16 MiB (16777216 bytes), the most upload_plan_image takes. Make it smaller and upload it again.", len(raw))
	}
	w, h, err := readImage(t, raw)
	if err != nil {
		return Image{}, errorf(CodeImageTypeMismatch, "The image does not match mimeType %s: %s. Send the bytes with the type they are.", t.mime, strings.TrimPrefix(err.Error(), "its "))
	}
	img, err := keepImage(t, raw, w, h, min(UploadStoredImageBytes, maxStoredBytes))
	var tmp *tooManyPixels
	switch {
	case errors.As(err, &tmp):
		return Image{}, errorf(CodeImageTooManyPixels, "The image is %d × %d pixels, more than Chopin can make smaller (at most %d pixels). Make it smaller and upload it again.", w, h, MaxImagePixels)
	case err != nil:
		return Image{}, fmt.Errorf("upload_plan_image: %w", err)
	}
	return img, nil
}

func checkAlt(alt string) error {
	switch n := utf8.RuneCountInString(alt); {
	case strings.TrimSpace(alt) == "":
		return errorf(CodeInvalidArgument, "alt is required: say in words what the image shows, on one line of at most %d characters.", MaxImageAlt)
	case strings.ContainsAny(alt, "\r\n\u2028\u2029\u0085"):
		return errorf(CodeInvalidArgument, "alt must be one line; write it without line breaks.")
	case n > MaxImageAlt:
		return errorf(CodeInvalidArgument, "alt is %d characters; it may have at most %d.", n, MaxImageAlt)
	case !utf8.ValidString(alt):
		return errorf(CodeInvalidArgument, "alt must be UTF-8 text.")
	}
	return nil
}

// UploadResult is upload_plan_image's answer for a stored image: its path
// and the Markdown that shows it with alt.
func UploadResult(img Image, alt string) UploadImageResult {
	return UploadImageResult{Path: img.Path(), Markdown: "![" + escapeAlt(alt) + "](" + img.Path() + ")"}
}

// escapeAlt keeps alt text inside the brackets of ![alt](path).
func escapeAlt(alt string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(alt)
}

// Header readers for the types the standard library and x/image do not
// read (or read only in part): AVIF, BMP and ICO.

func isAVIF(data []byte) bool {
	if len(data) < 16 || string(data[4:8]) != "ftyp" {
		return false
	}
	size := int(binary.BigEndian.Uint32(data[:4]))
	if size < 16 || size > len(data) {
		size = min(len(data), 64)
	}
	for i := 8; i+4 <= size; i += 4 {
		if i == 12 { // minor version
			continue
		}
		if b := string(data[i : i+4]); b == "avif" || b == "avis" {
			return true
		}
	}
	return false
}

// boxes walks the ISO BMFF boxes in data, calling fn with each type and
// body; a box longer than data is cut short.
func boxes(data []byte, fn func(typ string, body []byte) error) error {
	for len(data) > 0 {
		if len(data) < 8 {
			return errCutShort
		}
		size, hdr := uint64(binary.BigEndian.Uint32(data)), 8
		switch size {
		case 0:
			size = uint64(len(data))
		case 1:
			if len(data) < 16 {
				return errCutShort
			}
			size, hdr = binary.BigEndian.Uint64(data[8:]), 16
		}
		if size < uint64(hdr) {
			return errors.New("bad box size")
		}
		if size > uint64(len(data)) {
			return errCutShort
		}
		if err := fn(string(data[4:8]), data[hdr:size]); err != nil {
			return err
		}
		data = data[size:]
	}
	return nil
}

var errFound = errors.New("found")

// avifSize reads the largest image spatial extent (ispe) of meta/iprp/ipco:
// the primary image's, which a grid's tiles never exceed.
func avifSize(data []byte) (w, h int, err error) {
	err = boxes(data, func(typ string, body []byte) error {
		if typ != "meta" || len(body) < 4 {
			return nil
		}
		return boxes(body[4:], func(typ string, body []byte) error {
			if typ != "iprp" {
				return nil
			}
			return boxes(body, func(typ string, body []byte) error {
				if typ != "ipco" {
					return nil
				}
				return boxes(body, func(typ string, body []byte) error {
					if typ == "ispe" && len(body) >= 12 {
						bw, bh := int(binary.BigEndian.Uint32(body[4:])), int(binary.BigEndian.Uint32(body[8:]))
						if int64(bw)*int64(bh) > int64(w)*int64(h) {
							w, h = bw, bh
						}
					}
					return nil
				})
			})
		})
	})
	if err == nil && w == 0 {
		err = errors.New("no image size")
	}
	return w, h, err
}

func validBMPHeader(dibSize uint32) bool {
	switch dibSize {
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// bmpSize reads a BMP's size from its headers, whatever its compression,
// and checks that the pixels the headers promise are there.
func bmpSize(data []byte) (w, h int, err error) {
	le := binary.LittleEndian
	dib := le.Uint32(data[14:18])
	if int64(len(data)) < 14+int64(dib) {
		return 0, 0, errCutShort
	}
	var bpp, compression uint32
	if dib == 12 {
		w, h, bpp = int(le.Uint16(data[18:])), int(le.Uint16(data[20:])), uint32(le.Uint16(data[24:]))
	} else {
		w, h = int(int32(le.Uint32(data[18:]))), int(int32(le.Uint32(data[22:])))
		bpp = uint32(le.Uint16(data[28:]))
		if dib >= 20 {
			compression = le.Uint32(data[30:])
		}
	}
	if h < 0 {
		h = -h
	}
	if w <= 0 || h <= 0 || w > 1<<20 || h > 1<<20 {
		return 0, 0, errors.New("bad BMP size")
	}
	offset := int64(le.Uint32(data[10:14]))
	need := offset
	if compression == 0 || compression == 3 { // uncompressed rows
		need += (int64(bpp)*int64(w) + 31) / 32 * 4 * int64(h)
	}
	if int64(len(data)) < need {
		return 0, 0, errCutShort
	}
	return w, h, nil
}

// icoSize reads an icon's largest image, whose directory entry says 0 for
// 256 and whose PNG, when it holds one, says its own size.
func icoSize(data []byte) (w, h int, err error) {
	le := binary.LittleEndian
	n := int(le.Uint16(data[4:6]))
	if len(data) < 6+16*n {
		return 0, 0, errCutShort
	}
	for i := range n {
		e := data[6+16*i:]
		ew, eh := int(e[0]), int(e[1])
		if ew == 0 {
			ew = 256
		}
		if eh == 0 {
			eh = 256
		}
		size, off := int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
		if size == 0 || off < int64(6+16*n) {
			return 0, 0, errors.New("bad icon entry")
		}
		if off+size > int64(len(data)) {
			return 0, 0, errCutShort
		}
		if body := data[off : off+size]; bytes.HasPrefix(body, []byte("\x89PNG\r\n\x1a\n")) {
			cfg, err := png.DecodeConfig(bytes.NewReader(body))
			if err != nil {
				return 0, 0, err
			}
			ew, eh = cfg.Width, cfg.Height
		}
		if ew*eh > w*h {
			w, h = ew, eh
		}
	}
	return w, h, nil
}

// jpegOrientation reads the EXIF Orientation (1 to 8) of a JPEG, 1 when it
// has none. Browsers apply it, so a copy Chopin makes must too.
func jpegOrientation(data []byte) int {
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return 1
		}
		marker := data[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image
			return 1
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		if body := data[i+4 : i+2+n]; marker == 0xE1 && bytes.HasPrefix(body, []byte("Exif\x00\x00")) {
			return exifOrientation(body[6:])
		}
		i += 2 + n
	}
	return 1
}

func exifOrientation(tiff []byte) int {
	if len(tiff) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int64(bo.Uint32(tiff[4:]))
	if ifd+2 > int64(len(tiff)) {
		return 1
	}
	n := int64(bo.Uint16(tiff[ifd:]))
	for k := range n {
		e := ifd + 2 + 12*k
		if e+12 > int64(len(tiff)) {
			return 1
		}
		if bo.Uint16(tiff[e:]) == 0x0112 && bo.Uint16(tiff[e+2:]) == 3 {
			if o := int(bo.Uint16(tiff[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

// orient turns img as EXIF orientation o says a browser shows it.
func orient(img image.Image, o int) image.Image {
	if o <= 1 || o > 8 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	src := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.Draw(src, src.Bounds(), img, b.Min, xdraw.Src)
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range h {
		for x := range w {
			var dx, dy int
			switch o {
			case 2: // mirrored
				dx, dy = w-1-x, y
			case 3: // turned 180°
				dx, dy = w-1-x, h-1-y
			case 4: // mirrored vertically
				dx, dy = x, h-1-y
			case 5: // transposed
				dx, dy = y, x
			case 6: // turned 90° clockwise
				dx, dy = h-1-y, x
			case 7: // transversed
				dx, dy = h-1-y, w-1-x
			case 8: // turned 90° anticlockwise
				dx, dy = y, w-1-x
			}
			si, di := src.PixOffset(x, y), dst.PixOffset(dx, dy)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}
