/*
 * image.h: what kind of picture a file's first bytes are, and its size in
 * pixels, for view_image. Only the four formats MCP clients show as image
 * content (PNG, JPEG, GIF, WebP; MCP "ImageContent" takes base64 data and
 * a mimeType) are recognised, by their signatures:
 *
 *   PNG   89 50 4E 47 0D 0A 1A 0A, then the IHDR chunk (width, height as
 *         big-endian 32-bit; PNG spec §11.2.2)
 *   GIF   "GIF87a" or "GIF89a", then the logical screen width and height
 *         (little-endian 16-bit; GIF89a §18)
 *   WebP  "RIFF" size "WEBP", then a VP8, VP8L or VP8X chunk (RFC 9649 §2.5,
 *         §2.6, §2.7: frame or canvas size)
 *   JPEG  FF D8, then segments up to the first SOFn (ITU T.81 §B.2.2)
 *
 * The input is hostile: every read is bounds-checked against len.
 */
#ifndef CS_IMAGE_H
#define CS_IMAGE_H

#include <stddef.h>

enum image_format {
	IMAGE_UNKNOWN = 0,
	IMAGE_PNG,
	IMAGE_JPEG,
	IMAGE_GIF,
	IMAGE_WEBP,
};

/*
 * The format of buf[0..len) and, when its header is within len, its width
 * and height (else 0). Returns the format, IMAGE_UNKNOWN if none.
 */
enum image_format	image_info(const unsigned char *buf, size_t len,
			    unsigned long *width, unsigned long *height);

/* "image/png", ...; NULL for IMAGE_UNKNOWN. */
const char		*image_mime(enum image_format);
/* "PNG", "JPEG", ...; "unknown". */
const char		*image_name(enum image_format);

#endif
