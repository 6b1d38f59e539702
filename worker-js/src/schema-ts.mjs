// JSON Schemas of graphs typed with TypeScript (Annotation, plain TS
// types), read from the graph's source with the TypeScript compiler API,
// as LangGraph's JS server reports them. The `typescript` package comes
// from the user's project; without it these schemas are null.
//
// The graph's types are read from its compiled type: "~InputType" (the
// state as its update type, every key optional: the input and state
// schemas), "~OutputType" (the output) and builder._configSchema (the
// config/context channels' update types). Subgraphs are the compiled
// graphs a node added with addNode("name", ...) refers to, found in the
// source by following the export's initializer.

import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createRequire } from "node:module";

const DRAFT7 = "http://json-schema.org/draft-07/schema#";

/**
 * Loads `typescript` as the project at dir resolves it; null when it is
 * not installed.
 */
export async function loadTypescript(dir) {
  try {
    const req = createRequire(resolve(dir, "package.json"));
    return req("typescript");
  } catch {}
  try {
    const mod = await import("typescript");
    return mod.default ?? mod;
  } catch {
    return null;
  }
}

function compilerOptions(ts, dir) {
  let options = {};
  const found = ts.findConfigFile(dir, ts.sys.fileExists, "tsconfig.json");
  if (found) {
    const read = ts.readConfigFile(found, ts.sys.readFile);
    if (!read.error) options = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(found)).options;
  }
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    ...options,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    allowJs: true,
    allowImportingTsExtensions: true,
  };
}

/** The schema writer of one program: JSON Schemas of checker types, named types under definitions. */
class SchemaWriter {
  constructor(ts, program) {
    this.ts = ts;
    this.program = program;
    this.checker = program.getTypeChecker();
    this.defs = {};
    this.subclassIndex = null;
    this.open = new Set();
  }

  name(type) {
    return this.checker.typeToString(type, undefined, this.ts.TypeFormatFlags.NoTruncation).replace(/\s+/g, "");
  }

  description(symbol) {
    if (!symbol) return undefined;
    const text = this.ts.displayPartsToString(symbol.getDocumentationComment(this.checker)).trim();
    return text || undefined;
  }

  /** A property's type without LangGraph's Overwrite wrapper ({__overwrite__}). */
  stripOverwrite(type) {
    if (!type.isUnion()) return type;
    const kept = type.types.filter((t) => !t.getProperty?.("__overwrite__"));
    if (kept.length === type.types.length) return type;
    if (kept.length === 1) return kept[0];
    return { isUnion: () => true, types: kept, flags: this.ts.TypeFlags.Union, getProperty: () => undefined, synthetic: true };
  }

  /** The schema of an object type's data properties (methods left out), required never listed. */
  objectSchema(type, { strip = false } = {}) {
    const ts = this.ts;
    // an anonymous type that contains itself: {} where it recurs
    if (this.open.has(type) || this.open.size > 32) return {};
    this.open.add(type);
    try {
      return this.objectSchemaOf(type, strip);
    } finally {
      this.open.delete(type);
    }
  }

  objectSchemaOf(type, strip) {
    const ts = this.ts;
    const properties = {};
    for (const prop of this.checker.getPropertiesOfType(type)) {
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      if (decl && (ts.isMethodDeclaration(decl) || ts.isMethodSignature(decl) || ts.isGetAccessor(decl))) continue;
      const mods = decl ? ts.getCombinedModifierFlags(decl) : 0;
      if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected | ts.ModifierFlags.Static)) continue;
      if (prop.name.startsWith("#") || prop.name.startsWith("__@")) continue;
      let pt = decl ? this.checker.getTypeOfSymbolAtLocation(prop, decl) : this.checker.getTypeOfSymbol(prop);
      if (pt.getCallSignatures().length > 0 && !this.checker.getPropertiesOfType(pt).length) continue;
      if (strip) pt = this.stripOverwrite(pt);
      const s = this.messagesSchema(pt) ?? this.schema(pt, prop.flags & ts.SymbolFlags.Optional);
      if (s === undefined) continue;
      const d = this.description(prop);
      properties[prop.name] = d && !s.$ref ? { description: d, ...s } : s;
    }
    const out = { type: "object", properties };
    const index = this.checker.getIndexInfosOfType(type).find((i) => i.keyType.flags & ts.TypeFlags.String);
    if (index) {
      const s = this.schema(index.type);
      out.additionalProperties = s ?? {};
    }
    if (!Object.keys(properties).length && !index) delete out.properties;
    return out;
  }

  /** Whether t is LangChain's BaseMessage class itself (any instantiation). */
  isBaseMessage(t) {
    const symbol = t?.getSymbol?.();
    if (symbol?.name !== "BaseMessage" || !(symbol.flags & this.ts.SymbolFlags.Class)) return false;
    return (symbol.declarations ?? []).some((d) => /@langchain[\\/]core/.test(d.getSourceFile().fileName));
  }

  /**
   * A property holding messages (LangGraph's Messages: messages, message
   * likes, arrays of either), as LangGraph's server shows it: an array of
   * BaseMessage, or one BaseMessage; null for any other type.
   */
  messagesSchema(type) {
    const members = type.isUnion() ? type.types : [type];
    for (const m of members) {
      if (!this.checker.isArrayType?.(m)) continue;
      const [item] = this.checker.getTypeArguments(m);
      const base = (item?.isUnion() ? item.types : [item]).find((t) => this.isBaseMessage(t));
      if (base) return { type: "array", items: this.ref(base) };
    }
    const base = members.find((t) => this.isBaseMessage(t));
    return base && members.length > 1 ? this.ref(base) : null;
  }

  /** Classes whose base type is type (LangGraph's server shows an abstract class as their oneOf). */
  subclassesOf(type) {
    const ts = this.ts;
    if (!this.subclassIndex) {
      this.subclassIndex = [];
      for (const sf of this.program.getSourceFiles()) {
        const visit = (node) => {
          if (ts.isClassDeclaration(node) && node.heritageClauses) {
            for (const h of node.heritageClauses) {
              if (h.token !== ts.SyntaxKind.ExtendsKeyword) continue;
              for (const t of h.types) this.subclassIndex.push({ node, base: t });
            }
          }
          if (ts.isModuleDeclaration(node) || ts.isModuleBlock(node) || ts.isSourceFile(node)) ts.forEachChild(node, visit);
        };
        visit(sf);
      }
    }
    const out = [];
    const want = this.name(type);
    for (const entry of this.subclassIndex) {
      const { node, base } = entry;
      if (entry.baseName === undefined) {
        try {
          entry.baseName = this.name(this.checker.getTypeAtLocation(base));
        } catch {
          entry.baseName = null;
        }
      }
      if (node.name && entry.baseName === want) {
        const sub = this.checker.getTypeAtLocation(node.name);
        if (sub) out.push(sub);
      }
    }
    return out;
  }

  /** A $ref to the definition of a named class or interface type. */
  ref(type) {
    const ts = this.ts;
    const name = this.name(type);
    if (!(name in this.defs)) {
      this.defs[name] = null; // in progress: a recursive reference stays a $ref
      const symbol = type.getSymbol?.();
      const decl = symbol?.declarations?.find((d) => ts.isClassDeclaration(d));
      const abstract = decl && ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Abstract;
      let def;
      if (abstract) {
        const subs = this.subclassesOf(type);
        def = subs.length ? { oneOf: subs.map((s) => this.ref(s)) } : this.objectSchema(type);
      } else {
        def = this.objectSchema(type);
      }
      const d = this.description(symbol);
      this.defs[name] = d ? { description: d, ...def } : def;
    }
    return { $ref: `#/definitions/${name}` };
  }

  isNamed(type) {
    const ts = this.ts;
    const symbol = type.aliasSymbol ? null : type.getSymbol?.();
    if (!symbol) return false;
    return (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) !== 0;
  }

  /** The JSON Schema of type (undefined for a type with no JSON form, e.g. a function). */
  schema(type, optional = false) {
    const ts = this.ts;
    const c = this.checker;
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (f & ts.TypeFlags.Never) return undefined;
    if (type.isUnion()) {
      let members = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
      // boolean is true | false to the checker
      const trues = members.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
      const prim = new Set();
      const literals = { string: [], number: [] };
      const rest = [];
      if (trues.length === 2) {
        prim.add("boolean");
        members = members.filter((t) => !(t.flags & ts.TypeFlags.BooleanLiteral));
      }
      for (const t of members) {
        if (t.flags & ts.TypeFlags.Null) prim.add("null");
        else if (t.flags & ts.TypeFlags.String) prim.add("string");
        else if (t.flags & ts.TypeFlags.Number) prim.add("number");
        else if (t.flags & ts.TypeFlags.Boolean) prim.add("boolean");
        else if (t.flags & ts.TypeFlags.StringLiteral) literals.string.push(t.value);
        else if (t.flags & ts.TypeFlags.NumberLiteral) literals.number.push(t.value);
        else rest.push(t);
      }
      // objects first, then literal enums, then the primitive type list, as LangGraph's server orders them
      const parts = [];
      for (const t of rest) {
        const s = this.schema(t);
        if (s !== undefined) parts.push(s);
      }
      for (const kind of ["string", "number"]) {
        const vals = literals[kind];
        if (!vals.length) continue;
        if (prim.has(kind)) continue; // "a" | string is string
        parts.push({ enum: [...vals].sort(), type: kind });
      }
      if (prim.size) {
        const types = [...prim].sort();
        parts.push({ type: types.length === 1 ? types[0] : types });
      }
      if (parts.length === 0) return optional ? undefined : {};
      if (parts.length === 1) return parts[0];
      return { anyOf: parts };
    }
    if (f & ts.TypeFlags.Null) return { type: "null" };
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) return undefined;
    if (f & ts.TypeFlags.StringLike) return f & ts.TypeFlags.StringLiteral ? { type: "string", const: type.value } : { type: "string" };
    if (f & ts.TypeFlags.NumberLike) return f & ts.TypeFlags.NumberLiteral ? { type: "number", const: type.value } : { type: "number" };
    if (f & ts.TypeFlags.BooleanLike) return f & ts.TypeFlags.BooleanLiteral ? { type: "boolean", const: type.intrinsicName === "true" } : { type: "boolean" };
    if (f & ts.TypeFlags.BigIntLike) return { type: "integer" };
    if (c.isArrayType?.(type)) {
      const [item] = c.getTypeArguments(type);
      return { type: "array", items: (item && this.schema(item)) ?? {} };
    }
    if (c.isTupleType?.(type)) {
      const items = c.getTypeArguments(type).map((t) => this.schema(t) ?? {});
      return { type: "array", items, minItems: items.length, maxItems: items.length };
    }
    if (f & ts.TypeFlags.Object) {
      if (type.getCallSignatures().length > 0 && !c.getPropertiesOfType(type).length) return undefined;
      const symbol = type.getSymbol?.();
      if (symbol?.name === "Date") return { type: "string", format: "date-time" };
      if (this.isNamed(type)) return this.ref(type);
      return this.objectSchema(type);
    }
    if (type.isIntersection?.()) return this.objectSchema(type);
    return {};
  }

  /** A root schema: the object schema of type, with the definitions it used. */
  root(type, { strip = false } = {}) {
    this.defs = {};
    const s = type ? this.objectSchema(type, { strip }) : { type: "object" };
    const defs = Object.fromEntries(Object.entries(this.defs).filter(([, v]) => v != null));
    const out = { ...s };
    if (Object.keys(defs).length) out.definitions = defs;
    out.$schema = DRAFT7;
    return out;
  }
}

/** The type of the property name of type, or null. */
function prop(checker, type, name) {
  const p = type?.getProperty?.(name);
  if (!p) return null;
  return checker.getTypeOfSymbol(p);
}

/**
 * The compiled graph type of an export: a compiled graph, a builder (its
 * compile()'s result), a promise of either or a function returning one.
 */
function compiledType(ts, checker, type) {
  for (let i = 0; i < 4 && type; i++) {
    if (prop(checker, type, "~InputType")) return type;
    const sig = type.getCallSignatures()[0];
    if (sig) {
      type = checker.getAwaitedType(checker.getReturnTypeOfSignature(sig)) ?? checker.getReturnTypeOfSignature(sig);
      continue;
    }
    const awaited = checker.getAwaitedType(type);
    if (awaited && awaited !== type) {
      type = awaited;
      continue;
    }
    const compile = prop(checker, type, "compile");
    const csig = compile?.getCallSignatures()[0];
    if (csig) {
      type = checker.getReturnTypeOfSignature(csig);
      continue;
    }
    return null;
  }
  return type && prop(checker, type, "~InputType") ? type : null;
}

/** The update type of each channel of a state definition type (for config/context). */
function definitionUpdateType(ts, checker, def) {
  if (!def) return null;
  if (def.isUnion()) def = def.types.find((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
  return def ?? null;
}

/** The schemas {state, input, output, config} of a compiled graph type. */
function schemasOf(ts, writer, type) {
  const checker = writer.checker;
  const input = prop(checker, type, "~InputType");
  const output = prop(checker, type, "~OutputType");
  const builder = prop(checker, type, "builder");
  const configDef = definitionUpdateType(ts, checker, builder && prop(checker, builder, "_configSchema"));
  const update = (t) => t && !(t.flags & ts.TypeFlags.Any) ? writer.root(t, { strip: true }) : null;
  const inputSchema = update(input);
  let config = { type: "object", $schema: DRAFT7 };
  if (configDef && !(configDef.flags & ts.TypeFlags.Any)) {
    // a state definition: each channel's UpdateType
    const properties = {};
    writer.defs = {};
    for (const p of checker.getPropertiesOfType(configDef)) {
      let ch = checker.getTypeOfSymbol(p);
      // Annotation<T> left uncalled: the channel its no-argument call makes
      const bare = !prop(checker, ch, "UpdateType") && ch.getCallSignatures().find((s) => s.getParameters().length === 0);
      if (bare) ch = checker.getReturnTypeOfSignature(bare);
      const u = prop(checker, ch, "UpdateType");
      if (!u) continue;
      const s = writer.schema(writer.stripOverwrite(u), true);
      if (s !== undefined) properties[p.name] = s;
    }
    const defs = Object.fromEntries(Object.entries(writer.defs).filter(([, v]) => v != null));
    config = { type: "object", ...(Object.keys(properties).length ? { properties } : {}), ...(Object.keys(defs).length ? { definitions: defs } : {}), $schema: DRAFT7 };
  }
  return { state: inputSchema, input: inputSchema, output: update(output), config };
}

/** Whether type is a graph, a builder or a compiled graph. */
function isGraphLike(checker, type) {
  return !!(prop(checker, type, "~InputType") || (prop(checker, type, "compile") && prop(checker, type, "addNode")));
}

/**
 * The subgraphs a graph's source adds as nodes: [[namespace, variable
 * declaration]], nested ones with namespaces joined by "|". node is the
 * expression the export is initialised with.
 */
function findSubgraphs(ts, checker, node, prefix, seen = new Set()) {
  const out = [];
  const followed = [];
  const declOf = (id) => {
    let s = checker.getSymbolAtLocation(id);
    if (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
    const d = s?.valueDeclaration;
    return d && ts.isVariableDeclaration(d) && d.initializer ? d : null;
  };
  const visit = (n) => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === "addNode") {
      const [name, arg] = n.arguments;
      if (name && ts.isStringLiteralLike(name) && arg) {
        let found = null;
        const look = (m) => {
          if (found) return;
          if (ts.isIdentifier(m)) {
            const d = declOf(m);
            if (d && isGraphLike(checker, checker.getTypeAtLocation(d))) found = d;
          }
          ts.forEachChild(m, look);
        };
        look(arg);
        if (found) out.push([prefix ? `${prefix}|${name.text}` : name.text, found]);
      }
    }
    if (ts.isIdentifier(n)) {
      const d = declOf(n);
      if (d && !seen.has(d) && isGraphLike(checker, checker.getTypeAtLocation(d))) followed.push(d);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  if (!out.length) {
    // graph = workflow.compile(): the nodes are added where workflow is built
    for (const d of followed) {
      seen.add(d);
      out.push(...findSubgraphs(ts, checker, d.initializer, prefix, seen));
    }
    return out;
  }
  const nested = [];
  for (const [ns, d] of out) {
    if (seen.has(d)) continue;
    seen.add(d);
    nested.push(...findSubgraphs(ts, checker, d.initializer, ns, seen));
  }
  return [...out, ...nested];
}

/**
 * Reads the schemas of graphs from their sources with one TypeScript
 * program. targets: [{id, file, exportName}]. Returns Map<graph id,
 * {schemas: {state, input, output, config} | null, subgraphs: {namespace:
 * {state, input, output, config}}}>; a graph whose type cannot be read is
 * left out. ts is the typescript module.
 */
export function extractSchemas(ts, targets, dir) {
  const options = compilerOptions(ts, dir);
  const files = [...new Set(targets.map((t) => t.file))].filter((f) => existsSync(f));
  const program = ts.createProgram({ rootNames: files, options });
  const checker = program.getTypeChecker();
  const writer = new SchemaWriter(ts, program);
  const out = new Map();
  for (const { id, file, exportName } of targets) {
    try {
      const sf = program.getSourceFile(file);
      const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
      if (!moduleSymbol) continue;
      let sym = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === exportName);
      if (!sym) continue;
      if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
      const decl = sym.valueDeclaration ?? sym.declarations?.[0];
      const type = compiledType(ts, checker, decl ? checker.getTypeOfSymbolAtLocation(sym, decl) : checker.getTypeOfSymbol(sym));
      const schemas = type ? schemasOf(ts, writer, type) : null;
      const subgraphs = {};
      if (decl && ts.isVariableDeclaration(decl) && decl.initializer) {
        for (const [ns, d] of findSubgraphs(ts, checker, decl.initializer, "")) {
          const st = compiledType(ts, checker, checker.getTypeAtLocation(d));
          if (st) subgraphs[ns] = schemasOf(ts, writer, st);
        }
      }
      out.set(id, { schemas, subgraphs });
    } catch {
      // a type this reader does not know: the graph has no TS schemas
    }
  }
  return out;
}
