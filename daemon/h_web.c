/*
 * h_web.c: GET / (the web page), /ui/style.css and /ui/app.js: static files embedded in the binary at build time
 * (tools/embed.c, from web/), so the daemon never reads the source tree and the page fetches nothing from
 * elsewhere. Answered like every GET (strong ETag, 304); reply.c adds the Content-Security-Policy that keeps the
 * page to this origin.
 */
#include <stdlib.h>
#include <string.h>

#include "routes.h"

extern const mp_embedded_file mpd_web_files[];

/* The request path -> the embedded file's name (tools/embed.c drops the extension) and its media type. */
static const struct {
	const char *path, *name, *type;
} web_files[] = {
    {"/", "index", "text/html; charset=utf-8"},
    {"/ui/style.css", "style", "text/css; charset=utf-8"},
    {"/ui/app.js", "app", "text/javascript; charset=utf-8"},
};

mp_status mpd_h_web(mpd_request *req, mpd_reply *rep)
{
	size_t plen = strlen(req->path);

	for (size_t i = 0; i < sizeof(web_files) / sizeof(web_files[0]); i++) {
		size_t n = strlen(web_files[i].path);

		/* the route matched, so the path is the file's, with at most a trailing slash */
		if (!(plen == n || (plen == n + 1 && req->path[n] == '/')) ||
		    strncmp(req->path, web_files[i].path, n) != 0)
			continue;
		for (const mp_embedded_file *f = mpd_web_files; f->name; f++) {
			if (strcmp(f->name, web_files[i].name) != 0)
				continue;
			rep->text = strdup(f->data);
			if (rep->text == NULL)
				return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
			rep->text_type = web_files[i].type;
			rep->page = true;
			return MP_OK;
		}
	}
	return mp_fail(&rep->err, MP_EINTERNAL, "", "the page %s is not built in", req->path);
}
