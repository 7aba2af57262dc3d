/* gpuherd dashboard: its times in the browser's time zone, not the daemon's (a daemon under
   systemd runs in UTC). The cookie gpuherd_zone tells the daemon the zone, as the CLI's
   Gpuherd-Zone header does (api/askers_zone.py): "OFFSET NAME", the offset from UTC in
   seconds and the IANA name. A page rendered at another offset is loaded again, once: only
   once the cookie is seen to be set (a browser that refuses cookies keeps the daemon's zone,
   and no reload loop). Run before htmx, so that its first requests carry the cookie. */
(function () {
  "use strict";
  var offset = -new Date().getTimezoneOffset() * 60;
  var name = "";
  try {
    name = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (ignored) { /* no Intl: the offset alone */ }
  var cookie = "gpuherd_zone=" + encodeURIComponent(name ? offset + " " + name : String(offset));
  function isSet() { return document.cookie.split("; ").indexOf(cookie) >= 0; }
  if (isSet()) return;
  document.cookie = cookie + "; path=/; max-age=31536000; SameSite=Strict";
  var meta = document.querySelector('meta[name="gpuherd-offset"]');
  if (meta && Number(meta.content) !== offset && isSet()) location.reload();
})();
