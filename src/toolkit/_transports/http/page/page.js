"use strict";
// The tools page. All it shows comes from the MCP endpoint, as any client sees it, plus /shape: what
// a client of each protocol version receives for one call. Server data reaches the DOM only as text
// and DOM properties (el() below), never as markup; a link gets an href only when it is http(s).
(() => {
  const MODERN = "2026-07-28";
  const META = "io.modelcontextprotocol/";
  const BASE = document.body.getAttribute("data-base") || "";
  const $ = (id) => document.getElementById(id);
  const S = { config: null, era: MODERN, token: "", caps: null, listings: {}, sessions: {}, seq: 0, views: [] };
  // The lists a client reads: the request, its result's field, what names an item, the capability.
  const KINDS = {
    tools: { method: "tools/list", field: "tools", key: "name", cap: "tools" },
    resources: { method: "resources/list", field: "resources", key: "uri", cap: "resources" },
    templates: { method: "resources/templates/list", field: "resourceTemplates", key: "uriTemplate", cap: "resources" },
    prompts: { method: "prompts/list", field: "prompts", key: "name", cap: "prompts" },
  };
  // The page is an MCP Apps host (SEP-1865): it declares so, and renders a tool's ui:// app.
  const UI = "io.modelcontextprotocol/ui";
  const APP_MIME = "text/html;profile=mcp-app";
  const HOST_CAPS = { extensions: { [UI]: { mimeTypes: [APP_MIME] } } };
  const PROPS = new Set(["value", "checked", "hidden", "disabled", "required"]);

  // ---- Helpers
  // Via the prototypes: a <form>'s controls shadow its methods by name (a control named "append").
  const on = (node, type, f) => EventTarget.prototype.addEventListener.call(node, type, f);
  function el(tag, props, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k.startsWith("on")) on(node, k.slice(2), v);
      else if (PROPS.has(k)) node[k] = v;
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(4)) if (kid != null && kid !== false) Element.prototype.append.call(node, kid);
    return node;
  }
  const attempt = (f, fallback) => { try { return f(); } catch { return fallback; } };
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const list = (v) => (Array.isArray(v) ? v : []);
  const own = (o, k) => (isObj(o) && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);
  // Server JSON is parsed twice: plainly for the page's logic, and keeping each number's own text
  // (100.0 stays 100.0) for what is shown and sent on, so a pane shows exactly what came.
  const EXACT = Symbol("exact");
  const keepNumber = (k, v, at) =>
    typeof v === "number" && at && typeof at.source === "string" && at.source !== String(v) ? JSON.rawJSON(at.source) : v;
  function twin(plain, exact) {
    if (isObj(plain) || Array.isArray(plain)) {
      Object.defineProperty(plain, EXACT, { value: exact });
      for (const k of Object.keys(plain)) if (exact != null && typeof exact === "object") twin(plain[k], exact[k]);
    }
    return plain;
  }
  function parseServer(text) {
    const plain = JSON.parse(text);
    const exact = typeof JSON.rawJSON === "function" ? attempt(() => JSON.parse(text, keepNumber), null) : null;
    return exact === null ? plain : twin(plain, exact);
  }
  const exactOf = (v) => (v !== null && typeof v === "object" && v[EXACT]) || v;
  const pretty = (v) => JSON.stringify(exactOf(v), null, 2) ?? "(nothing)";
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const pane = (cls, text, label) => el("pre", { class: cls, tabindex: 0, "aria-label": label, text });
  let ids = 0;
  const uid = (prefix) => `${prefix}-${++ids}`;
  const ptr = (path, key) => `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
  const isHttp = (uri) => attempt(() => /^https?:$/.test(new URL(uri).protocol), false);
  const errorText = (e) => e.text || e.message;
  function pageError(message) {
    $("page-error").append(el("p", { text: message }));
    $("page-error").hidden = false;
  }
  // The outcome, a new element each time so that an error (role="alert") is announced; never "pending".
  function status(slot, text, kind, note) {
    const cls = kind === "pending" ? "result-pending" : `result-status ${kind}`;
    slot.replaceChildren(el("p", { class: cls, role: kind === "error" ? "alert" : null, text }));
    if (note) slot.append(el("p", { class: "result-note", text: note }));
  }

  // ---- MCP over Streamable HTTP
  class RpcError extends Error {
    constructor(message, code, data, http) {
      super(message);
      Object.assign(this, { code, data, http });
    }
    get text() {
      const head = this.code != null ? `JSON-RPC error ${this.code}: ` : "";
      return head + this.message + (this.http ? ` (${this.http})` : "");
    }
  }
  // Mcp-Name and Mcp-Param-* values: as they are when visible ASCII, else the spec's Base64 form.
  function headerValue(value) {
    const text = String(value);
    if (/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(text)) return text;
    return `=?base64?${btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(""))}?=`;
  }
  async function rpc(method, params, headers, onNote) {
    const id = method.startsWith("notifications/") ? undefined : ++S.seq;
    const all = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers };
    if (S.token) all.Authorization = `Bearer ${S.token}`;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const response = await fetch(S.config.mcpPath, { method: "POST", headers: all, body });
    if (id === undefined) return { response };
    let message = null;
    let text = "";
    if ((response.headers.get("Content-Type") || "").includes("text/event-stream")) message = await fromStream(response, id, onNote);
    else {
      text = await response.text();
      message = attempt(() => parseServer(text), null);
    }
    const challenge = response.headers.get("WWW-Authenticate");
    const http = response.ok ? null : `HTTP ${response.status}${challenge ? `; WWW-Authenticate: ${challenge}` : ""}`;
    if (isObj(message) && isObj(message.error)) {
      const { code, message: msg, data } = message.error;
      throw new RpcError(String(msg ?? "(no message)"), code ?? "?", data, http);
    }
    if (!response.ok) throw new RpcError(`${response.statusText || "error"}: ${text.slice(0, 500) || "(no body)"}`, null, null, http);
    if (!isObj(message) || !isObj(message.result)) throw new RpcError("the reply holds no result object");
    return { result: message.result, response };
  }
  // An SSE response: read events until the one answering this request; notifications go to onNote.
  async function fromStream(response, id, onNote) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let data = [];
    const take = () => {
      const message = attempt(() => parseServer(data.join("\n")), null);
      data = [];
      if (onNote && isObj(message) && message.method && message.id == null) attempt(() => onNote(message));
      return isObj(message) && message.id === id && ("result" in message || "error" in message) ? message : null;
    };
    try {
      for (let done = false; !done; ) {
        const chunk = await reader.read();
        done = chunk.done;
        buffer += decoder.decode(chunk.value || new Uint8Array(), { stream: !done });
        for (let cut; (cut = buffer.search(/\r?\n/)) >= 0; ) {
          const line = buffer.slice(0, cut);
          buffer = buffer.slice(buffer[cut] === "\r" ? cut + 2 : cut + 1);
          if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
          else if (line === "" && data.length) {
            const found = take();
            if (found) return found;
          }
        }
      }
      return data.length ? take() : null;
    } finally {
      reader.cancel().catch(() => {});
    }
  }
  // A 2026-07-28 request: stateless, with the headers that mirror the body.
  async function modern(method, params, name, extra, onNote) {
    const headers = { "MCP-Protocol-Version": MODERN, "Mcp-Method": method, ...extra };
    if (name != null) headers["Mcp-Name"] = headerValue(name);
    const _meta = { ...params._meta, [`${META}protocolVersion`]: MODERN, [`${META}clientCapabilities`]: HOST_CAPS };
    return (await rpc(method, { ...params, _meta }, headers, onNote)).result;
  }
  const legacyHeaders = (v) => ({ "MCP-Protocol-Version": v, ...(S.sessions[v] && { "Mcp-Session-Id": S.sessions[v] }) });
  function endSession(version, session) {
    const headers = { "Mcp-Session-Id": session, "MCP-Protocol-Version": version, ...(S.token && { Authorization: `Bearer ${S.token}` }) };
    fetch(S.config.mcpPath, { method: "DELETE", headers, keepalive: true }).catch(() => {});
  }
  function closeSessions() {
    for (const [version, session] of Object.entries(S.sessions)) endSession(version, session);
    S.sessions = {};
  }
  // Every list as a client of `version` sees it (a legacy client initializes first), once per version.
  function listings(version) {
    if (S.listings[version]) return S.listings[version];
    let session = null;
    const load = async () => {
      let caps = S.caps;
      let send = (method, params) => modern(method, params);
      if (version !== MODERN) {
        const clientInfo = { name: "toolkit tools page", version: "1" };
        const init = await rpc("initialize", { protocolVersion: version, capabilities: {}, clientInfo }, {});
        session = init.response.headers.get("Mcp-Session-Id");
        if (session) S.sessions[version] = session;
        await rpc("notifications/initialized", undefined, legacyHeaders(version));
        caps = init.result.capabilities;
        send = async (method, params) => (await rpc(method, params, legacyHeaders(version))).result;
      }
      const out = {};
      const fill = async ([key, kind]) => {
        out[key] = [];
        if (isObj(caps) && !caps[kind.cap]) return;
        try {
          for (let page = 0, cursor; page < 100; page++) {
            const result = await send(kind.method, cursor ? { cursor } : {});
            out[key].push(...list(result[kind.field]));
            if (typeof result.nextCursor !== "string" || !result.nextCursor || result.nextCursor === cursor) break;
            cursor = result.nextCursor;
          }
        } catch (error) {
          if (error.code !== -32601) throw error; // the server has no such list
        }
      };
      await Promise.all(Object.entries(KINDS).map(fill));
      return out;
    };
    const loading = (S.listings[version] = load());
    loading.catch(() => {
      if (S.listings[version] === loading) delete S.listings[version];
      if (!session) return;
      endSession(version, session);
      if (S.sessions[version] === session) delete S.sessions[version];
    });
    return loading;
  }

  // ---- JSON Schema
  // The subschema whose $anchor or $dynamicAnchor is `name`, depth first.
  function anchored(node, name, depth = 0) {
    if (node === null || typeof node !== "object" || depth > 64) return undefined;
    if (node.$anchor === name || node.$dynamicAnchor === name) return node;
    for (const sub of Object.values(node)) {
      const found = anchored(sub, name, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  // A $ref in the schema: "#/json/pointer" (percent- and ~-decoded) or "#anchor".
  function pointer(root, ref) {
    if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
    if (ref.length > 1 && ref[1] !== "/") return anchored(root, attempt(() => decodeURIComponent(ref.slice(1)), ref.slice(1)));
    let node = root;
    for (const raw of ref.slice(1).split("/").slice(1)) {
      const key = attempt(() => decodeURIComponent(raw), raw).replace(/~1/g, "/").replace(/~0/g, "~");
      node = node != null && typeof node === "object" ? node[key] : undefined;
    }
    return node;
  }
  // A schema with its $ref (and a lone allOf) followed; `refs` records the refs taken, to stop recursion.
  function resolve(root, schema, refs = []) {
    let s = isObj(schema) ? schema : {};
    for (let hops = 0; hops < 32; hops++) {
      if (typeof s.$ref === "string") {
        const { $ref, ...rest } = s;
        const target = pointer(root, $ref);
        if (!isObj(target)) break;
        refs = refs.concat($ref);
        s = { ...target, ...rest };
      } else if (list(s.allOf).length === 1 && isObj(s.allOf[0])) {
        const { allOf, ...rest } = s;
        s = { ...allOf[0], ...rest };
      } else break;
    }
    return [s, refs];
  }
  const TYPES = {
    null: (v) => v === null,
    boolean: (v) => typeof v === "boolean",
    integer: Number.isInteger,
    number: (v) => typeof v === "number",
    string: (v) => typeof v === "string",
    array: Array.isArray,
    object: isObj,
  };
  // Roughly "could the value be of this schema": to pick the union branch for a value.
  function matches(root, schema, value, depth = 0) {
    const [s] = resolve(root, schema);
    if (depth > 6) return true;
    if ("const" in s) return same(s.const, value);
    if (Array.isArray(s.enum)) return s.enum.some((v) => same(v, value));
    const alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts) && !alts.some((a) => matches(root, a, value, depth + 1))) return false;
    const types = [].concat(s.type || (s.properties ? "object" : []));
    if (types.length && !types.some((t) => TYPES[t] && TYPES[t](value))) return false;
    if (!isObj(value) || !isObj(s.properties)) return true;
    if (list(s.required).some((k) => own(value, k) === undefined)) return false;
    if (s.additionalProperties === false && Object.keys(value).some((k) => own(s.properties, k) === undefined)) return false;
    return Object.entries(s.properties).every(([k, sub]) => own(value, k) === undefined || matches(root, sub, value[k], depth + 1));
  }
  // A union branch's label: its title, else the name of the model its $ref points at
  // ("#/$defs/Celsius" → "Celsius"), else what it is (describe).
  function modelName(root, schema) {
    for (let s = schema, hops = 0; isObj(s) && hops < 32; hops++) {
      if (s.title) return String(s.title);
      if (typeof s.$ref !== "string") break;
      const m = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(s.$ref);
      if (m) return attempt(() => decodeURIComponent(m[1]), m[1]).replace(/~1/g, "/").replace(/~0/g, "~");
      s = pointer(root, s.$ref);
    }
    return describe(root, schema);
  }
  // A branch's label when it has no title: "object: celsius", "object: kind="cat", lives", "null".
  function describe(root, schema) {
    const [s] = resolve(root, schema);
    if (s.title) return String(s.title);
    if ("const" in s) return JSON.stringify(s.const);
    if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`;
    const type = [].concat(s.type || (s.properties ? "object" : "any")).join(" or ");
    if (type === "object" && isObj(s.properties)) {
      const keys = Object.entries(s.properties).map(([k, p]) => {
        const [r] = resolve(root, p);
        return "const" in r ? `${k}=${JSON.stringify(r.const)}` : k;
      });
      return keys.length ? `object: ${keys.join(", ")}` : "object";
    }
    if (type === "array") return `array of ${isObj(s.items) ? describe(root, s.items) : "any"}`;
    return s.format ? `${type} (${s.format})` : type;
  }
  const LIMITS = [
    ["minimum", "≥"], ["exclusiveMinimum", ">"], ["maximum", "≤"], ["exclusiveMaximum", "<"],
    ["multipleOf", "multiple of"], ["minLength", "min length"], ["maxLength", "max length"],
    ["minItems", "min items"], ["maxItems", "max items"], ["pattern", "pattern"], ["format", "format:"],
  ];
  function hints(s) {
    const limits = LIMITS.filter(([k]) => s[k] != null && typeof s[k] !== "object").map(([k, w]) => `${w} ${s[k]}`);
    const out = [s.title, s.description, limits.join(", "), "default" in s && `default: ${JSON.stringify(s.default)}`];
    return out.filter(Boolean).map(String).join(" · ");
  }
  // The arguments marked x-mcp-header: a 2026-07-28 client repeats their values as Mcp-Param-* headers.
  function paramHeaders(root, args) {
    const out = {};
    const walk = (schema, value, depth) => {
      const [s] = resolve(root, schema);
      const name = s["x-mcp-header"];
      if (typeof name === "string" && value != null && typeof value !== "object") out[`Mcp-Param-${name}`] = headerValue(value);
      if (isObj(s.properties) && isObj(value) && depth < 16) {
        for (const [k, sub] of Object.entries(s.properties)) if (own(value, k) !== undefined) walk(sub, value[k], depth + 1);
      }
    };
    walk(root, args, 0);
    return out;
  }

  // ---- The call form: a control per argument, named by its JSON Pointer
  // Each builder returns { node, get }: get() is the value, or undefined to leave the argument out;
  // maybe quiet(): after get(), true when the value is only untouched checkboxes or required empties.
  function formBuilder(root, prefix) {
    const id = () => uid(prefix);
    const labelText = (o) => [o.label, o.required && !o.item ? [" ", el("span", { class: "req", text: "required" })] : null];
    const label = (forId, o) => el("label", { for: forId }, labelText(o));
    function help(s, target) {
      const text = hints(s);
      if (!text) return null;
      target.setAttribute("aria-describedby", `${target.id}-help`);
      return el("p", { class: "help", id: `${target.id}-help`, text });
    }
    function field(s, o, control, get, cls = "") {
      const parts = cls === "check" ? [control, label(control.id, o)] : [label(control.id, o), control];
      return { node: el("div", { class: `field ${cls}` }, parts, help(s, control)), get };
    }
    function group(s, path, o, cls, kids) {
      const box = el("fieldset", { class: cls, "data-path": path, id: id() }, el("legend", {}, labelText(o)));
      box.append(...[help(s, box), kids].flat().filter(Boolean));
      return box;
    }
    function build(schema, path, o) {
      const [s, refs] = resolve(root, schema, o.refs);
      o = { ...o, refs };
      const init = o.init !== undefined ? o.init : s.default;
      // A recursive model: expand a few levels, then take the rest as JSON.
      if (refs.some((r) => refs.filter((x) => x === r).length > 3)) return json(s, path, o, init);
      if ("const" in s) return choice(s, [s.const], path, o, init);
      if (list(s.enum).length) return choice(s, s.enum, path, o, init);
      if (Array.isArray(s.type)) return union({ ...s, type: undefined, anyOf: s.type.map((type) => ({ type })) }, path, o, init);
      if (Array.isArray(s.oneOf || s.anyOf)) return union(s, path, o, init);
      if (s.not || s.if || s.patternProperties || s.allOf) return json(s, path, o, init);
      const type = s.type || (isObj(s.properties) ? "object" : null);
      if (type === "string") return text(s, path, o, init);
      if (type === "integer" || type === "number") return number(s, path, o, init, type);
      if (type === "boolean") return bool(s, path, o, init);
      if (type === "array") return array(s, path, o, init);
      if (type === "object") return object(s, path, o, init);
      if (type === "null") return { node: el("p", { class: "null-field", text: `${o.label}: null` }), get: () => null };
      return json(s, path, o, init);
    }
    function text(s, path, o, init) {
      const kind = { date: "date", "date-time": "datetime-local", email: "email", uri: "url" }[s.format];
      const long = s.maxLength > 200 || (!kind && typeof init === "string" && (init.length > 80 || init.includes("\n")));
      const control = el(long ? "textarea" : "input", { type: long ? null : kind || "text", id: id(), name: path, required: o.required });
      if (kind === "datetime-local") control.step = "1";
      if (typeof s.pattern === "string" && !long && attempt(() => new RegExp(s.pattern, "v"), null)) control.pattern = s.pattern;
      if (typeof init === "string") control.value = kind === "datetime-local" ? toLocal(init) : init;
      const get = () => (control.value === "" ? undefined : kind === "datetime-local" ? withOffset(control.value) : control.value);
      return field(s, o, control, get);
    }
    function number(s, path, o, init, type) {
      const control = el("input", { type: "number", id: id(), name: path, required: o.required });
      const [min, max] = [s.minimum ?? s.exclusiveMinimum, s.maximum ?? s.exclusiveMaximum];
      if (typeof min === "number") control.min = String(min);
      if (typeof max === "number") control.max = String(max);
      control.step = typeof s.multipleOf === "number" ? String(s.multipleOf) : type === "integer" ? "1" : "any";
      if (typeof init === "number") control.value = String(init);
      return field(s, o, control, () => (control.value === "" ? undefined : Number(control.value)));
    }
    function bool(s, path, o, init) {
      if (!o.required && !("default" in s)) return choice(s, [true, false], path, o, init);
      let changed = false;
      const control = el("input", { type: "checkbox", id: id(), name: path, checked: init === true, onchange: () => (changed = true) });
      return { ...field(s, o, control, () => control.checked, "check"), quiet: () => !changed };
    }
    // Option values are the JSON of each value, their text the value itself, or its JSON unless all
    // are strings that read as no other JSON value (["1", 1, null, "null"]).
    function choice(s, values, path, o, init) {
      const control = el("select", { id: id(), name: path });
      const known = values.find((v) => same(v, init));
      const plain = values.every((v) => typeof v === "string" && !attempt(() => (JSON.parse(v), true), false));
      if (!(o.required && (values.length === 1 || known !== undefined))) control.append(el("option", { value: "", text: "(not set)" }));
      for (const v of values) control.append(el("option", { value: JSON.stringify(v), text: plain && v ? v : JSON.stringify(v) }));
      if (known !== undefined) control.value = JSON.stringify(known);
      return field(s, o, control, () => (control.value === "" ? undefined : JSON.parse(control.value)));
    }
    // What the form cannot express (maps, patternProperties, not, if, deep recursion): JSON text.
    function json(s, path, o, init) {
      const control = el("textarea", { class: "json-field", id: id(), name: path, rows: 3, spellcheck: "false", required: o.required });
      if (init !== undefined) control.value = pretty(init);
      const get = () => {
        const t = control.value.trim();
        try {
          return t ? JSON.parse(t) : undefined;
        } catch (error) {
          throw Object.assign(new Error(`not valid JSON (${error.message})`), { path });
        }
      };
      return field({ ...s, title: [s.title, "JSON value"].filter(Boolean).join(" — ") }, o, control, get);
    }
    // A map (additionalProperties a schema) is JSON; optional, it is set only by a value not quiet.
    function object(s, path, o, init) {
      if (s.additionalProperties !== false && (!isObj(s.properties) || s.additionalProperties !== undefined)) return json(s, path, o, init);
      const required = new Set(list(s.required));
      const kids = Object.entries(s.properties || {}).map(([k, sub]) => [
        k,
        build(sub, ptr(path, k), { label: k, required: required.has(k), init: own(init, k), refs: o.refs }),
      ]);
      const nodes = kids.length ? kids.map(([, w]) => w.node) : el("p", { class: "empty", text: path ? "No fields." : "This tool takes no arguments." });
      let set = false;
      const get = () => {
        const got = kids.map(([k, w]) => [k, w.get(), w]).filter(([, v]) => v !== undefined);
        set = got.some(([, , w]) => !w.quiet || !w.quiet());
        return set || o.required ? Object.fromEntries(got) : undefined; // keeps a key "__proto__"
      };
      return { node: o.bare ? el("div", { class: "fields" }, nodes) : group(s, path, o, "object", nodes), get, quiet: () => !set };
    }
    function array(s, path, o, init) {
      const box = el("div", { class: "items" });
      let items = [];
      let touched = false;
      const itemSchema = (i) => (i < list(s.prefixItems).length ? s.prefixItems[i] : s.items);
      const render = (values) => {
        box.replaceChildren();
        items = [];
        values.forEach(add);
      };
      const add = (value) => {
        const i = items.length;
        const name = `${o.label}[${i}]`;
        const w = build(itemSchema(i), ptr(path, i), { label: name, required: true, item: true, init: value, refs: o.refs });
        w.blank = resolve(root, itemSchema(i), o.refs)[0].type === "string" ? "" : null;
        const remove = () => {
          const values = items.map((x) => attempt(x.get));
          values.splice(i, 1);
          touched = true;
          render(values);
          (box.querySelectorAll("button.remove")[i] || more).focus();
        };
        items.push(w);
        box.append(el("div", { class: "item" }, w.node, el("button", { type: "button", class: "remove", "aria-label": `Remove ${name}`, onclick: remove }, "Remove")));
      };
      const more = el("button", { type: "button", class: "add", "data-add": path, "aria-label": `Add item to ${o.label}` }, "Add item");
      more.addEventListener("click", () => {
        touched = true;
        add(undefined);
        const first = box.lastElementChild.querySelector("input, select, textarea, button");
        if (first) first.focus();
      });
      render(list(init));
      // Items keep their places: an empty one is "" (a string) or null, for the server to name.
      const get = () => {
        const out = items.map((w) => {
          const v = w.get();
          return v === undefined ? w.blank : v;
        });
        return out.length || o.required || touched ? out : undefined;
      };
      return { node: group(s, path, o, "array", [box, more]), get, quiet: () => !touched && !items.length };
    }
    // oneOf/anyOf: a branch picker at the value's path; the chosen branch's fields under the same path.
    function union(s, path, o, init) {
      const { oneOf, anyOf, $defs, definitions, title, description, default: _, ...shared } = s;
      const branches = (oneOf || anyOf).map((b) => {
        const [r, refs] = resolve(root, b, o.refs);
        const schema = { ...shared, ...r };
        if (isObj(shared.properties)) schema.properties = { ...shared.properties, ...(isObj(r.properties) && r.properties) };
        if (shared.required) schema.required = [...new Set(list(shared.required).concat(list(r.required)))];
        return { schema, refs, isNull: schema.type === "null", label: modelName(root, b) };
      });
      const nullable = branches.length === 2 && branches.some((b) => b.isNull);
      const picker = el("select", { class: "branch-picker", id: id(), "data-path": path });
      if (!o.required) picker.append(el("option", { value: "", text: "(not set)" }));
      branches.forEach((b, i) => picker.append(el("option", { value: String(i), text: b.isNull && nullable ? "(null)" : b.label })));
      const first = (test) => String(Math.max(0, branches.findIndex(test)));
      picker.value = init !== undefined ? first((b) => matches(root, b.schema, init)) : o.required ? first((b) => !b.isNull) : "";
      const slot = el("div", { class: "branch" });
      let current = null;
      const show = (value) => {
        const b = branches[Number(picker.value)];
        const options = { label: o.label, required: true, item: true, bare: o.bare, init: value, refs: b && b.refs };
        current = picker.value === "" || !b ? null : b.isNull ? { get: () => null } : build(b.schema, path, options);
        slot.replaceChildren(...(current && current.node ? [current.node] : []));
      };
      picker.addEventListener("change", () => show(undefined));
      show(init);
      const name = path ? [o.label, el("span", { class: "muted", text: " (type)" })] : "Arguments";
      const head = label(picker.id, { label: name, required: o.required && path });
      const node = el("div", { class: "field union" }, head, picker, help({ title, description }, picker), slot);
      return { node, get: () => (current ? current.get() : undefined) };
    }
    return build;
  }
  const pad = (n) => String(n).padStart(2, "0");
  // The date-time control gives a local time without offset; JSON Schema's date-time needs one.
  const toLocal = (value, d = new Date(value)) => attempt(() => new Date(d - d.getTimezoneOffset() * 6e4).toISOString().slice(0, 19), value.slice(0, 19));
  function withOffset(value) {
    const full = /T\d\d:\d\d$/.test(value) ? `${value}:00` : value;
    const minutes = -new Date(full).getTimezoneOffset();
    if (!minutes) return `${full}Z`;
    return `${full}${minutes < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
  }

  // ---- Validation errors: "Invalid arguments for tool 'x': arguments/hours: msg; arguments: msg"
  function problems(text) {
    const m = /^Invalid arguments for tool '[\s\S]*?': (arguments[\s\S]*)$/.exec(text);
    return m ? m[1].split(/; (?=arguments[/:])/).map((part) => {
      const cut = part.indexOf(": ");
      return cut < 0 ? ["", part] : [part.slice("arguments".length, cut), part.slice(cut + 2)];
    }) : [];
  }
  // (A call form's controls are named "/...", with generated ids: none shadows a form property.)
  function controlAt(form, path) {
    const q = CSS.escape(path);
    return form.querySelector(`.fields-root [name="${q}"], .fields-root fieldset[data-path="${q}"], .fields-root .branch-picker[data-path="${q}"]`);
  }
  // Mark each offending control (or the nearest fieldset above a path without one), focus the first.
  function markErrors(form, found) {
    let first = null;
    for (const [path, message] of found) {
      const missing = /^['"](.+)['"] is a required property$/.exec(message);
      let target = form.classList.contains("json-mode") ? form.querySelector(".arguments-json") : missing && controlAt(form, ptr(path, missing[1]));
      for (let p = path; !target && p; p = p.slice(0, p.lastIndexOf("/"))) target = controlAt(form, p);
      target = target || controlAt(form, "") || form.querySelector("fieldset.arguments");
      const note = el("p", { class: "field-error", id: uid("error") }, el("strong", { text: "Invalid:" }), ` ${message}`);
      if (target.matches("fieldset")) target.querySelector("legend").after(note);
      else (target.closest(".field") || target.parentNode).append(note);
      const before = target.getAttribute("aria-describedby") || "";
      if (!target.hasAttribute("data-described")) target.setAttribute("data-described", before);
      target.setAttribute("aria-describedby", `${before} ${note.id}`.trim());
      target.setAttribute("aria-invalid", "true");
      first = first || target;
    }
    if (!first) return;
    const focusable = first.matches("fieldset") ? first.querySelector("input, select, textarea") : first;
    if (focusable) focusable.focus({ preventScroll: true });
    first.scrollIntoView({ block: "center" });
  }
  function clearErrors(form) {
    form.querySelectorAll(".field-error, .form-message > *").forEach((n) => n.remove());
    form.querySelectorAll("[aria-invalid]").forEach((n) => n.removeAttribute("aria-invalid"));
    form.querySelectorAll("[data-described]").forEach((n) => {
      const before = n.getAttribute("data-described");
      if (before) n.setAttribute("aria-describedby", before);
      else n.removeAttribute("aria-describedby");
      n.removeAttribute("data-described");
    });
  }

  // ---- Content blocks and resource contents
  const bytes = (b64) => Math.floor((String(b64).replace(/[^A-Za-z0-9+/]/g, "").length * 3) / 4);
  // Base64 data as an image or audio player (data: URL) when its mimeType is one, else a note.
  function media(mime, b64, what, only) {
    mime = String(mime || "");
    const kind = mime.split("/")[0];
    if (typeof b64 !== "string" || !/^[\w.+-]+\/[\w.+-]+$/.test(mime) || !(only ? [only] : ["image", "audio"]).includes(kind)) {
      return el("p", { class: "block-note", text: `${what}: ${mime || "no mimeType"}, binary, ${bytes(b64 || "")} bytes` });
    }
    const src = `data:${mime};base64,${b64}`;
    if (kind === "image") return el("img", { class: "block-image", src, alt: `${what} (${mime})` });
    return el("audio", { class: "block-audio", controls: true, src, "aria-label": `${what} (${mime})` });
  }
  function block(b) {
    if (!isObj(b)) return pane("block-json", pretty(b), "Content");
    if (b.type === "text") return pane("block-text", String(b.text ?? ""), "Text content");
    if (b.type === "image" || b.type === "audio") {
      return el("div", { class: "block" }, media(b.mimeType, b.data, `${b.type === "image" ? "Image" : "Audio"} from the tool`, b.type));
    }
    if (b.type === "resource_link") {
      const uri = String(b.uri ?? "");
      const link = isHttp(uri) ? el("a", { class: "block-link", href: uri, rel: "noopener noreferrer", text: uri }) : el("code", { text: uri });
      const name = b.title || b.name;
      const extra = [b.description, b.mimeType].filter(Boolean).join(" · ");
      return el("div", { class: "block" }, el("p", {}, `Resource link${name ? `: ${name}` : ""} `, link), extra && el("p", { class: "muted", text: extra }));
    }
    if (b.type === "resource") return contents(b.resource, "Embedded resource");
    return pane("block-json", pretty(b), "Content");
  }
  function contents(item, what) {
    if (!isObj(item)) return pane("block-json", pretty(item), what);
    const caption = el("p", { class: "block-caption" }, `${what} `, el("code", { text: String(item.uri ?? "") }), item.mimeType && ` (${item.mimeType})`);
    const body = typeof item.text === "string" ? pane("block-resource-text", item.text, what)
      : typeof item.blob === "string" ? media(item.mimeType, item.blob, what) : pane("block-json", pretty(item), what);
    return el("div", { class: "block" }, caption, body);
  }
  const blocks = (content) => (Array.isArray(content) ? content : content == null ? [] : [content]).map(block);

  // ---- Item sections
  // The item's entry in the selected era's list, exactly as that client receives it.
  function listingView(kinds, key) {
    const kind = KINDS[kinds];
    const heading = el("h3", {});
    const note = el("p", { class: "muted" });
    const pre = pane("wire-listing", "Loading…", `${kind.method} entry`);
    const view = {
      era(version) {
        heading.textContent = `What a ${version} client sees in ${kind.method}`;
        pre.setAttribute("aria-busy", "true");
      },
      listing(version, lists, error) {
        const entry = lists && list(lists[kinds]).find((x) => isObj(x) && x[kind.key] === key);
        pre.removeAttribute("aria-busy");
        pre.setAttribute("data-version", version);
        pre.textContent = error ? `(could not list as a ${version} client: ${errorText(error)})` : pretty(entry ?? null);
        note.textContent = error || entry ? "" : `Not in the ${kind.method} a ${version} client receives.`;
      },
    };
    view.era(S.era);
    S.views.push(view);
    return el("div", { class: "listing" }, heading, note, pre);
  }
  const usedIds = new Set();
  function uniqueId(text) {
    const base = String(text).replace(/\s+/g, "_");
    let id = base;
    for (let n = 2; usedIds.has(id); n++) id = `${base}-${n}`;
    return usedIds.add(id) && id;
  }
  function header(item, fallback) {
    const title = item.title || (isObj(item.annotations) && item.annotations.title) || "";
    const name = String(item.name ?? fallback ?? "");
    const icons = list(item.icons).filter((i) => isObj(i) && /^(https:|data:image\/)/i.test(String(i.src)));
    return el("div", { class: "card-head" },
      icons.map((i) => el("img", { class: "icon", src: i.src, alt: "", width: 24, height: 24, onerror: (e) => (e.target.hidden = true) })),
      el("h2", {}, el("button", { type: "button", class: "toggle", "aria-expanded": "false" },
        String(title || name), title && title !== name && [" ", el("code", { class: "item-name", text: name })])));
  }
  // A card: its head (a button that expands it) and description always shown, the rest in a panel
  // that is hidden until expanded. `find` is the text the filter searches.
  const cards = [];
  function card(attrs, item, fallback, shown, body) {
    const id = uniqueId(attrs.id);
    const panel = el("div", { class: "card-body", id: uniqueId(`${id}--panel`), hidden: true }, body);
    const head = header(item, fallback);
    const toggle = head.querySelector(".toggle");
    toggle.setAttribute("aria-controls", panel.id);
    const section = el("section", { ...attrs, id, class: `${attrs.class} card collapsed` }, head, shown, panel);
    on(toggle, "click", () => setOpen(section, toggle.getAttribute("aria-expanded") !== "true"));
    const annotated = isObj(item.annotations) ? item.annotations.title : null;
    const find = [item.name, item.title, annotated, item.description, item.uri, item.uriTemplate, fallback];
    cards.push({ section, find: find.filter((v) => v != null).map(String).join("\n").toLowerCase() });
    return section;
  }
  function setOpen(section, open) {
    const toggle = section.querySelector(".card-head .toggle");
    const panel = toggle && $(toggle.getAttribute("aria-controls"));
    if (!panel) return;
    toggle.setAttribute("aria-expanded", String(open));
    panel.hidden = !open;
    section.classList.toggle("collapsed", !open);
  }
  const description = (item) => item.description && el("p", { class: "description", text: String(item.description) });
  const facts = (item) => {
    const shown = [["mimeType", item.mimeType], ["size", item.size]].filter(([, v]) => v != null).map(([k, v]) => `${k}: ${v}`);
    return shown.length ? el("p", { class: "muted", text: shown.join(" · ") }) : null;
  };
  const details = (cls, title, schema) => el("details", { class: cls }, el("summary", { text: title }), pane("", pretty(schema), title));
  const ANNOTATIONS = [
    ["readOnlyHint", "read-only"], ["destructiveHint", "destructive", "non-destructive"],
    ["idempotentHint", "idempotent"], ["openWorldHint", "open-world", "closed-world"],
  ];
  function annotations(a) {
    const words = ANNOTATIONS.map(([k, yes, no]) => (isObj(a) ? (a[k] === true ? yes : a[k] === false ? no : null) : null)).filter(Boolean);
    return el("p", { class: "annotations", hidden: !words.length }, words.map((w) => el("span", { class: "badge", text: w })));
  }
  const columns = (left, right) => el("div", { class: "columns" }, el("div", { class: "column" }, left), el("div", { class: "column" }, right));

  function toolSection(tool) {
    const name = String(tool.name);
    const key = uid("tool");
    const root = isObj(tool.inputSchema) ? tool.inputSchema : {};
    const build = formBuilder(root, key);
    const fields = el("fieldset", { class: "arguments fields-root", "data-path": "" }, el("legend", { text: "Arguments" }));
    let widget = null;
    const rebuild = (init) => {
      widget = build(root, "", { label: "arguments", required: true, bare: true, init });
      fields.replaceChildren(fields.firstChild, widget.node);
    };
    rebuild(undefined);
    const jsonArea = el("textarea", { class: "arguments-json", id: `${key}-json`, rows: 8, spellcheck: "false" });
    const jsonBox = el("div", { class: "field", hidden: true }, el("label", { for: jsonArea.id, text: "Arguments (JSON object)" }), jsonArea);
    const message = el("div", { class: "form-message" });
    const toggle = el("button", { type: "button", class: "edit-json secondary", "aria-pressed": "false" }, "Edit as JSON");
    const callButton = el("button", { type: "submit", class: "call", "aria-label": `Call ${name}` }, "Call");
    const form = el("form", { class: "call-form", "data-tool": name, novalidate: true, "aria-label": `Call ${name}` },
      el("h3", { text: "Try it" }), fields, jsonBox, message, el("div", { class: "actions" }, callButton, toggle));
    const jsonMode = () => form.classList.contains("json-mode");
    const args = () => (jsonMode() ? JSON.parse(jsonArea.value.trim() || "{}") : widget.get() ?? {});
    toggle.addEventListener("click", () => {
      clearErrors(form);
      try {
        if (jsonMode()) rebuild(args());
        else jsonArea.value = pretty(args());
      } catch (error) {
        if (error.path != null) return markErrors(form, [[error.path, error.message]]);
        return message.append(el("p", { role: "alert", class: "error", text: `The JSON is not valid: ${error.message}` }));
      }
      form.classList.toggle("json-mode");
      fields.hidden = jsonMode();
      jsonBox.hidden = !jsonMode();
      toggle.setAttribute("aria-pressed", String(jsonMode()));
      (jsonMode() ? jsonArea : toggle).focus();
    });

    // The result: outcome, content blocks, then the natural value beside the selected era's wire result.
    const statusSlot = el("div", {});
    const blockBox = el("div", { class: "content-blocks" });
    const appSlot = el("div", { class: "app-slot" });
    const natural = pane("natural-value", "", "Natural value");
    const wire = pane("wire-result", "", "Wire result");
    const wireHeading = el("h4", {});
    const result = el("section", { class: "result", "aria-live": "polite", "aria-label": `Result of ${name}`, hidden: true },
      el("h3", { text: "Result" }), statusSlot, blockBox, appSlot,
      columns([el("h4", { text: "Natural value (structuredContent, 2026-07-28)" }), natural], [wireHeading, wire]));
    let shaped = null; // { byVersion } from /shape, { error } for a JSON-RPC error, or an Error
    let calls = 0;
    const showWire = (version) => {
      wireHeading.textContent = `What a ${version} client receives`;
      wire.setAttribute("data-version", version);
      if (shaped instanceof Error) wire.textContent = `(could not get each version's result: ${shaped.message})`;
      else if (shaped && shaped.byVersion) wire.textContent = pretty(shaped.byVersion[version] ?? null);
      else wire.textContent = shaped ? pretty({ error: shaped.error }) : "…";
    };
    S.views.push({ era: showWire, listing() {} });

    on(form, "submit", async (event) => {
      event.preventDefault();
      clearErrors(form);
      let values;
      try {
        values = args();
        if (!isObj(values)) throw new Error("the arguments must be a JSON object");
      } catch (error) {
        return markErrors(form, [[error.path || "", error.message]]);
      }
      const call = ++calls;
      const done = () => call === calls;
      result.hidden = false;
      result.setAttribute("aria-busy", "true");
      callButton.disabled = true;
      status(statusSlot, "Calling…", "pending");
      blockBox.replaceChildren();
      retireApps(appSlot, "a new call of the tool");
      natural.textContent = "";
      shaped = null;
      showWire(S.era);
      let res;
      try {
        const progress = ({ method, params: p }) => {
          if (method !== "notifications/progress" || !done() || !isObj(p)) return;
          status(statusSlot, `Calling… ${p.progress}${p.total != null ? ` of ${p.total}` : ""}${p.message ? `: ${p.message}` : ""}`, "pending");
        };
        const params = { name, arguments: values, _meta: { progressToken: `${key}-${call}` } };
        res = await modern("tools/call", params, name, paramHeaders(root, values), progress);
      } catch (error) {
        res = error;
      }
      if (!done()) return;
      callButton.disabled = false;
      result.removeAttribute("aria-busy");
      if (res instanceof Error) {
        status(statusSlot, errorText(res), "error");
        natural.textContent = "(no result)";
        shaped = { error: { code: res.code, message: res.message, data: res.data } };
        return showWire(S.era);
      }
      const failed = res.isError === true;
      const other = res.resultType && res.resultType !== "complete" ? `resultType: ${res.resultType}` : null;
      status(statusSlot, failed ? "isError" : "OK", failed ? "error" : "ok", failed ? "The tool reported an error." : other);
      blockBox.replaceChildren(...blocks(res.content));
      const appUri = uiOf(tool).resourceUri;
      if (typeof appUri === "string" && appUri.startsWith("ui://")) appSlot.append(appView(name, appUri, values, res));
      natural.textContent = "structuredContent" in res ? pretty(exactOf(res).structuredContent) : "(no structured content)";
      const text = list(res.content).find((b) => isObj(b) && b.type === "text");
      if (failed && text) markErrors(form, problems(String(text.text)));
      try {
        const response = await fetch(S.config.shapePath, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ result: exactOf(res), outputSchema: isObj(tool.outputSchema) ? exactOf(tool.outputSchema) : null }),
        });
        const answer = await response.text();
        const body = attempt(() => parseServer(answer), null);
        if (!response.ok || !isObj(body)) throw new Error((body && body.error) || `HTTP ${response.status}`);
        if (done()) shaped = { byVersion: body };
      } catch (error) {
        if (done()) shaped = error;
      }
      if (done()) showWire(S.era);
    });

    return card({ class: "tool", id: `tool-${name}`, "data-tool": name }, tool, null, description(tool), [
      annotations(tool.annotations),
      el("div", { class: "schemas" }, details("input-schema", "Input schema", tool.inputSchema),
        isObj(tool.outputSchema) && details("output-schema", "Output schema", tool.outputSchema)),
      columns(form, listingView("tools", tool.name)), result]);
  }

  // ---- MCP Apps host: the app in a sandboxed iframe (allow-scripts only: an opaque origin), its
  // CSP set by the server on {BASE}/sandbox from the resource's _meta.ui.csp, its `allow` from
  // _meta.ui.permissions, and the host side of the app protocol over postMessage: ui/initialize,
  // then the tool's input and result; the app's tools/call go through this page's MCP client, only
  // to tools whose visibility includes "app", and its resources/read only to ui:// resources. The
  // page has no model: ui/message and ui/update-model-context are shown, as text, in the app's box.
  // A new call of the tool retires the app: ui/resource-teardown, its answer awaited, then removal.
  const uiOf = (tool) => (isObj(tool) && isObj(tool._meta) && isObj(tool._meta.ui) ? tool._meta.ui : {});
  // SEP-1865's permissions and the Permissions Policy feature each maps to; no others.
  const APP_PERMISSIONS = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };
  const DARK = window.matchMedia("(prefers-color-scheme: dark)");
  const theme = () => (DARK.matches ? "dark" : "light");
  const TEARDOWN_WAIT_MS = 30000; // the longest a retired app may take to answer ui/resource-teardown
  const isId = (id) => typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  const refusal = (code, message) => Object.assign(new Error(message), { code });
  // A content block list as text: text blocks' text, any other block as [its type].
  const blocksText = (content) =>
    list(Array.isArray(content) ? content : [content]).filter(isObj)
      .map((b) => (b.type === "text" ? String(b.text ?? "") : `[${String(b.type ?? "block")}]`)).join("\n");
  async function appCallable(toolName) {
    const tools = list((await listings(MODERN)).tools);
    const tool = tools.find((t) => isObj(t) && t.name === toolName);
    if (!tool) return false;
    const visibility = uiOf(tool).visibility;
    return !Array.isArray(visibility) || visibility.includes("app");
  }
  // Retire the apps in `slot` (a new call of their tool replaces them).
  const retirements = new WeakMap();
  function retireApps(slot, reason) {
    for (const box of Array.from(slot.children)) (retirements.get(box) || (() => box.remove()))(reason);
  }
  function appView(toolName, uri, args, toolResult) {
    const slot = el("div", {});
    const says = el("div", { class: "app-says", "aria-live": "polite", hidden: true });
    const frame = el("iframe", { class: "app-frame", title: `App ${uri}`, sandbox: "allow-scripts", "data-app": uri });
    const box = el("div", { class: "app", "data-app": uri }, el("h4", { text: `App ${uri}` }), slot, says, frame);
    const post = (message) => frame.contentWindow && frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*");
    const reply = (id, result, error) => post(error ? { id, error } : { id, result });
    const notify = (method, params) => post({ method, params });
    let html = null;
    let granted = {};
    let initialized = false;
    let retired = false;
    let asked = 0;
    const pending = new Map(); // this page's requests to the app: id → resolve
    const request = (method, params) => new Promise((resolve) => {
      const id = ++asked;
      pending.set(id, resolve);
      post({ id, method, params });
    });
    // What the app asked the page to show: one line per kind, the latest of each, as text only.
    const show = (kind, ...kids) => {
      const line = el("p", { class: `app-${kind}` }, ...kids);
      const old = says.querySelector(`.app-${kind}`);
      if (old) old.replaceWith(line);
      else says.append(line);
      says.hidden = false;
    };
    const handlers = {
      "ui/initialize": async (p) => ({
        protocolVersion: typeof p.protocolVersion === "string" ? p.protocolVersion : "2026-01-26",
        hostInfo: { name: "toolkit tools page", version: "1" },
        hostCapabilities: {
          openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
          message: { text: {} }, updateModelContext: { text: {}, structuredContent: {} },
          sandbox: { permissions: granted },
        },
        hostContext: { theme: theme(), displayMode: "inline", availableDisplayModes: ["inline"], platform: "web" },
      }),
      ping: async () => ({}),
      "tools/call": async (p) => {
        const called = typeof p.name === "string" ? p.name : "";
        if (!(await appCallable(called))) throw refusal(-32602, `the host refuses ${called}: its _meta.ui.visibility does not include "app"`);
        return modern("tools/call", { name: called, arguments: isObj(p.arguments) ? p.arguments : {} }, called, paramHeaders({}, {}));
      },
      "resources/read": async (p) => {
        const wanted = typeof p.uri === "string" ? p.uri : "";
        if (!wanted.startsWith("ui://")) throw refusal(-32602, `the tools page lets an app read only ui:// resources, not ${JSON.stringify(wanted)}`);
        return modern("resources/read", { uri: wanted }, wanted);
      },
      "ui/open-link": async (p) => {
        const url = typeof p.url === "string" ? p.url : "";
        if (!isHttp(url)) throw refusal(-32000, `the tools page opens only http(s) links, not ${JSON.stringify(url.slice(0, 200))}`);
        show("link", "The app opened a link: ", el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: url }));
        window.open(url, "_blank", "noopener,noreferrer");
        return {};
      },
      "ui/message": async (p) => {
        if ((p.role !== undefined && p.role !== "user") || !(isObj(p.content) || Array.isArray(p.content))) {
          throw refusal(-32602, 'ui/message takes role "user" and content blocks');
        }
        show("message", `The app says: ${blocksText(p.content)}`);
        return {};
      },
      "ui/update-model-context": async (p) => {
        const parts = [p.content !== undefined ? blocksText(p.content) : "", "structuredContent" in p ? JSON.stringify(p.structuredContent) : ""];
        show("context", `The app's context for the model: ${parts.filter(Boolean).join("\n") || "(empty)"}`);
        return {};
      },
    };
    const themed = () => initialized && !retired && notify("ui/notifications/host-context-changed", { theme: theme() });
    const listener = async (event) => {
      if (event.source !== frame.contentWindow || !isObj(event.data) || event.data.jsonrpc !== "2.0") return; // only this app's own frame
      const { id, method, params } = event.data;
      if (method === undefined && ("result" in event.data || "error" in event.data)) {
        // An answer to this page's request (ui/resource-teardown); any other is dropped.
        if (isId(id) && pending.has(id)) pending.get(id)(event.data);
        pending.delete(id);
        return;
      }
      if (typeof method !== "string" || (params !== undefined && !isObj(params))) {
        if (isId(id)) reply(id, undefined, { code: -32600, message: "not a JSON-RPC request: a method name and an object of params" });
        return;
      }
      if (method === "ui/notifications/sandbox-proxy-ready") {
        // Once: a frame that navigated itself (to a sandbox URL with a looser CSP of its choosing)
        // gets nothing more from this page.
        if (html != null) notify("ui/notifications/sandbox-resource-ready", { html });
        html = null;
        return;
      }
      if (method === "ui/notifications/initialized") {
        if (initialized || retired) return;
        initialized = true;
        notify("ui/notifications/tool-input", { arguments: args });
        notify("ui/notifications/tool-result", toolResult);
        return;
      }
      if (method === "ui/notifications/size-changed" && isObj(params) && Number.isFinite(params.height)) {
        frame.style.height = `${Math.min(Math.max(params.height, 40), 2000)}px`;
        return;
      }
      if (!isId(id)) return; // another notification: nothing to do
      const handler = Object.prototype.hasOwnProperty.call(handlers, method) ? handlers[method] : null;
      if (!handler) return reply(id, undefined, { code: -32601, message: `the tools page does not implement ${method}` });
      box.setAttribute("data-last-method", method);
      try {
        // A retired app may finish its work (its tools and resources), nothing more.
        if (retired && !["tools/call", "resources/read", "ping"].includes(method)) throw refusal(-32000, "the app is being torn down");
        reply(id, await handler(params || {}));
      } catch (error) {
        box.setAttribute("data-refused", String(error.message));
        reply(id, undefined, { code: Number.isInteger(error.code) ? error.code : -32603, message: String(error.message) });
      }
    };
    window.addEventListener("message", listener);
    DARK.addEventListener("change", themed);
    retirements.set(box, async (reason) => {
      if (retired) return;
      retired = true;
      box.hidden = true; // hidden, still running: it can answer, and finish what it was doing
      DARK.removeEventListener("change", themed);
      if (initialized) {
        let timer;
        const late = new Promise((resolve) => (timer = setTimeout(resolve, TEARDOWN_WAIT_MS)));
        await Promise.race([request("ui/resource-teardown", { reason }), late]);
        clearTimeout(timer);
      }
      window.removeEventListener("message", listener);
      box.remove();
    });
    (async () => {
      const read = await modern("resources/read", { uri }, uri).catch((error) => status(slot, errorText(error), "error"));
      const item = read && list(read.contents).find((c) => isObj(c) && c.mimeType === APP_MIME && typeof c.text === "string");
      if (!item) return read && status(slot, `${uri} has no ${APP_MIME} text to render`, "error");
      const listed = list((await listings(MODERN)).resources).find((r) => isObj(r) && r.uri === uri);
      const ui = isObj(item._meta) && isObj(item._meta.ui) ? item._meta.ui : (isObj(listed) && isObj(listed._meta) && isObj(listed._meta.ui) ? listed._meta.ui : {});
      const asks = isObj(ui.permissions) ? ui.permissions : {};
      granted = Object.fromEntries(Object.keys(APP_PERMISSIONS).filter((k) => isObj(own(asks, k))).map((k) => [k, {}]));
      const allow = Object.keys(granted).map((k) => APP_PERMISSIONS[k]).join("; ");
      if (allow) frame.setAttribute("allow", allow); // before src: a frame's policy is fixed as it navigates
      html = item.text;
      frame.src = `${BASE}/sandbox?csp=${encodeURIComponent(JSON.stringify(isObj(ui.csp) ? ui.csp : {}))}`;
      if (ui.prefersBorder === false) frame.classList.add("borderless");
    })();
    return box;
  }

  // resources/read or prompts/get: the outcome in `slot`; the result, or null after an error. Each
  // request has a new slot and body: a late answer to an earlier one lands in detached nodes.
  async function fetchInto(slot, body, run) {
    status(slot, "Loading…", "pending");
    body.replaceChildren();
    const result = await run().catch((error) => status(slot, errorText(error), "error"));
    if (result) status(slot, "OK", "ok");
    return result || null;
  }
  async function readInto(out, uri) {
    const slot = el("div", {});
    const body = el("div", {});
    out.replaceChildren(el("p", { class: "muted" }, "Read ", el("code", { text: uri })), slot, body);
    const result = await fetchInto(slot, body, () => modern("resources/read", { uri }, uri));
    if (result) body.append(...list(result.contents).map((c) => contents(c, "Contents of")));
  }
  function resourceSection(resource) {
    const uri = String(resource.uri ?? "");
    const out = el("div", { class: "resource-contents", "aria-live": "polite" });
    const read = el("button", { type: "button", class: "read", "aria-label": `Read ${uri}`, onclick: () => readInto(out, uri) }, "Read");
    return card({ class: "resource", id: `resource-${uri}`, "data-uri": uri }, resource, uri, description(resource),
      [itemFacts(resource, uri), columns([read, out], listingView("resources", uri))]);
  }
  // RFC 6570 levels 1-2: {var} percent-encodes its value; {+var} and {#var} keep reserved characters
  // such as "/" ({#var} also adds the "#").
  const EXPRESSION = /\{([+#]?)([^}]*)\}/g;
  const varName = (v) => v.trim().replace(/\*$|:\d+$/, "");
  function encode(value, reserved) {
    if (!reserved) return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    return encodeURI(value).replace(/%5B/gi, "[").replace(/%5D/gi, "]").replace(/%25([0-9A-Fa-f]{2})/g, "%$1");
  }
  function expand(template, values) {
    return template.replace(EXPRESSION, (_, op, names) => {
      const parts = names.split(",").map(varName).filter((n) => values[n]).map((n) => encode(values[n], op));
      return parts.length ? (op === "#" ? "#" : "") + parts.join(",") : "";
    });
  }
  // A plain text input named `name` (template variables, prompt arguments).
  function textField(name, id, required, about) {
    const input = el("input", { type: "text", name, id, required, "aria-describedby": about ? `${id}-help` : null });
    const req = required && [" ", el("span", { class: "req", text: "required" })];
    return [input, el("div", { class: "field" }, el("label", { for: id }, name, req), input, about && el("p", { class: "help", id: `${id}-help`, text: about }))];
  }
  const itemFacts = (item, uri) => [uri && el("p", {}, el("code", { class: "uri", text: uri })), facts(item)];
  function templateSection(template) {
    const uriTemplate = String(template.uriTemplate ?? "");
    const names = [...new Set([...uriTemplate.matchAll(EXPRESSION)].flatMap((m) => m[2].split(",").map(varName)))].filter(Boolean);
    const key = uid("template");
    const fields = names.map((n, i) => textField(n, `${key}-${i}`));
    const inputs = fields.map(([input]) => input);
    const out = el("div", { class: "resource-contents", "aria-live": "polite" });
    const form = el("form", { class: "template-form", novalidate: true, "aria-label": `Read ${uriTemplate}` },
      fields.map(([, node]) => node),
      el("div", { class: "actions" }, el("button", { type: "submit", class: "read" }, "Read")));
    on(form, "submit", (event) => {
      event.preventDefault();
      readInto(out, expand(uriTemplate, Object.fromEntries(inputs.map((i) => [i.name, i.value]))));
    });
    const attrs = { class: "template", id: `template-${template.name || uriTemplate}`, "data-uri-template": uriTemplate };
    return card(attrs, template, uriTemplate, description(template),
      [itemFacts(template, uriTemplate), columns([form, out], listingView("templates", uriTemplate))]);
  }
  function promptSection(prompt) {
    const name = String(prompt.name ?? "");
    const key = uid("prompt");
    const args = list(prompt.arguments).filter((a) => isObj(a) && a.name != null);
    const made = args.map((a, i) => textField(String(a.name), `${key}-${i}`, a.required === true, [a.title, a.description].filter(Boolean).join(" · ")));
    const inputs = made.map(([input]) => input);
    const fields = made.map(([, node]) => node);
    const output = el("div", { class: "prompt-output", "aria-live": "polite" });
    const form = el("form", { class: "prompt-form", novalidate: true, "aria-label": `Get prompt ${name}` },
      fields.length ? fields : el("p", { class: "empty", text: "This prompt takes no arguments." }),
      el("div", { class: "actions" }, el("button", { type: "submit", class: "get" }, "Get prompt")));
    on(form, "submit", async (event) => {
      event.preventDefault();
      const values = Object.fromEntries(inputs.filter((i) => i.value !== "").map((i) => [i.name, i.value]));
      const slot = el("div", {});
      const messages = el("div", { class: "prompt-messages" });
      output.replaceChildren(slot, messages);
      const result = await fetchInto(slot, messages, () => modern("prompts/get", { name, arguments: values }, name));
      if (!result) return;
      if (result.description) messages.append(el("p", { class: "muted", text: String(result.description) }));
      for (const m of list(result.messages).filter(isObj)) {
        messages.append(el("div", { class: "message" }, el("p", { class: "role", text: String(m.role ?? "?") }), blocks(m.content)));
      }
    });
    return card({ class: "prompt", id: `prompt-${name}`, "data-prompt": name }, prompt, null, description(prompt),
      [itemFacts(prompt), columns([form, output], listingView("prompts", name))]);
  }

  // ---- The page
  const GROUPS = [
    ["tools", "Tools", toolSection],
    ["resources", "Resources", resourceSection],
    ["templates", "Resource templates", templateSection],
    ["prompts", "Prompts", promptSection],
  ];
  // Until the lists arrive, #items holds the served "Loading…"; after a failure, this error state.
  function loaded() {
    $("items").removeAttribute("aria-busy");
  }
  function failed(message) {
    pageError(message);
    loaded();
    $("toolbar").hidden = true;
    $("items").replaceChildren(el("p", { class: "load-failed", text: "Nothing to show: the page could not load the server’s tools (the error is above)." }));
  }
  function render(lists) {
    const nav = document.querySelector("nav[aria-label=Contents]");
    $("items").replaceChildren();
    loaded();
    nav.replaceChildren();
    S.views = [];
    cards.length = 0;
    usedIds.clear();
    for (const [key, title, make] of GROUPS) {
      const items = list(lists[key]).filter(isObj);
      if (!items.length) continue;
      const links = el("ul", {});
      const group = el("div", { class: "group", id: `group-${key}` }, el("h2", { class: "group-title", text: `${title} (${items.length})` }));
      for (const item of items) {
        const section = make(item);
        group.append(section);
        const text = String(item.title || item.name || item[KINDS[key].key]);
        const link = el("li", {}, el("a", { href: `#${encodeURIComponent(section.id)}`, text }));
        cards[cards.length - 1].link = link;
        links.append(link);
      }
      $("items").append(group);
      nav.append(el("p", { class: "nav-group" }, el("a", { href: `#group-${key}`, text: title })), links);
    }
    $("toolbar").hidden = !cards.length;
    if (!$("items").firstChild) $("items").append(el("p", { class: "empty", text: "This server has no tools, resources or prompts." }));
    filter();
    openHash();
  }
  // The filter: every word typed must be in the item's name, title, description (or URI).
  function filter() {
    const words = $("filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const c of cards) {
      const hit = words.every((w) => c.find.includes(w));
      c.section.hidden = !hit;
      if (c.link) c.link.hidden = !hit;
      shown += hit;
    }
    for (const group of $("items").querySelectorAll(".group")) group.hidden = !group.querySelector(".card:not([hidden])");
    for (const heading of document.querySelectorAll("nav .nav-group")) {
      const links = heading.nextElementSibling;
      heading.hidden = links && !links.querySelector("li:not([hidden])");
    }
    const query = $("filter").value.trim();
    $("filter-status").textContent = !query ? "" : shown ? `${shown} of ${cards.length} shown` : `Nothing matches “${query}”.`;
  }
  // A link to a card (#tool-name, from the contents or from elsewhere) opens it.
  function openCard(id) {
    const target = id && document.getElementById(id);
    if (!target || !target.matches("section.card")) return false;
    if (target.hidden) {
      $("filter").value = "";
      filter();
    }
    setOpen(target, true);
    return true;
  }
  function openHash() {
    const id = attempt(() => decodeURIComponent(location.hash.slice(1)), "");
    if (openCard(id)) document.getElementById(id).scrollIntoView({ block: "start" });
  }
  async function setEra(version) {
    S.era = version;
    S.views.forEach((v) => v.era(version));
    let lists = null;
    let error = null;
    try {
      lists = await listings(version);
    } catch (e) {
      error = e;
      pageError(`Could not list as a ${version} client: ${errorText(e)}`);
    }
    if (S.era === version) S.views.forEach((v) => v.listing(version, lists, error));
  }
  async function load() {
    $("page-error").replaceChildren();
    $("page-error").hidden = true;
    closeSessions();
    S.listings = {};
    S.caps = null;
    try {
      const found = await modern("server/discover", {});
      const info = found.serverInfo || (isObj(found._meta) && found._meta[`${META}serverInfo`]) || {};
      S.caps = isObj(found.capabilities) ? found.capabilities : null;
      const name = String(info.title || info.name || "MCP server");
      $("server-name").replaceChildren(name, ...(info.version ? [" ", el("span", { class: "version", text: String(info.version) })] : []));
      document.title = `${name} — tools`;
      $("instructions").textContent = found.instructions ? String(found.instructions) : "";
      $("instructions").hidden = !found.instructions;
    } catch (error) {
      $("server-name").textContent = "MCP server";
      pageError(`server/discover failed: ${errorText(error)}`);
    }
    try {
      render(await listings(MODERN));
      await setEra(S.era);
    } catch (error) {
      failed(`Could not list the server's tools: ${errorText(error)}`);
    }
  }
  function controls() {
    for (const { version, shape } of list(S.config.versions)) {
      const radio = el("input", { type: "radio", name: "era", value: version, id: `era-${version}`, checked: version === S.era });
      radio.addEventListener("change", () => radio.checked && setEra(version));
      $("era").append(el("div", { class: "era-option" }, radio, el("label", { for: radio.id, text: `${version} — ${shape}` })));
    }
    $("endpoint").textContent = S.config.mcpPath;
    if (!S.config.auth) return;
    const input = el("input", { type: "password", id: "token", autocomplete: "off", spellcheck: "false" });
    const form = el("form", { class: "token-form", novalidate: true },
      el("label", { for: "token", text: "Bearer token" }), input, el("button", { type: "submit", class: "secondary" }, "Use token"));
    on(form, "submit", (event) => {
      event.preventDefault();
      S.token = input.value.trim();
      load();
    });
    $("auth").append(form);
  }
  async function boot() {
    try {
      S.config = await (await fetch(`${BASE}/config.json`, { headers: { Accept: "application/json" } })).json();
      if (!isObj(S.config) || typeof S.config.mcpPath !== "string") throw new Error("not a page configuration");
    } catch (error) {
      $("server-name").textContent = "Tools page";
      return failed(`Could not load ${BASE}/config.json: ${error.message}`);
    }
    controls();
    window.addEventListener("pagehide", closeSessions);
    if (!S.config.auth) return load();
    $("server-name").textContent = "MCP server";
    loaded();
    $("items").replaceChildren(el("p", { class: "empty", text: "This server needs a bearer token: enter it under “Bearer token”." }));
  }
  on($("filter"), "input", filter);
  on($("expand-all"), "click", () => cards.forEach((c) => !c.section.hidden && setOpen(c.section, true)));
  on($("collapse-all"), "click", () => cards.forEach((c) => setOpen(c.section, false)));
  on(window, "hashchange", openHash);
  // A click on a link to the card already in the address bar changes no hash: open it all the same.
  on(document.querySelector("nav[aria-label=Contents]"), "click", (event) => {
    const link = event.target.closest && event.target.closest("a[href^='#']");
    if (link) openCard(attempt(() => decodeURIComponent(link.getAttribute("href").slice(1)), ""));
  });
  boot().catch((error) => failed(`The page failed: ${error && error.message}`));
})();
