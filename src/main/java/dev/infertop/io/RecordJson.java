package dev.infertop.io;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the JSON of infertop's own cache files (layouts, probe sites, content hashes, machine ceilings) into
 * their records, by component name: unknown properties are ignored and a missing one is the component's
 * default (0, false, null), as Jackson's databind reads a record; anything else (a type mismatch, a number out
 * of range or with a fraction where an integer goes, bytes after the document, nesting deeper than
 * {@link #MAX_DEPTH}, a constructor that refuses the values) is {@link Malformed}. The files are still written
 * with Jackson.
 *
 * <p>Why not Jackson here: these files are read on every start, before the JIT has warmed up, and Jackson's
 * first read pays for its own start: ObjectMapper's class initialisation (its default date format loads the
 * JDK's time-zone and calendar data), BigDecimal's tables, a deserializer built by introspection for each
 * record type; all of it on the path to the first screen (measurements.md).
 */
public final class RecordJson {
    /** Deeper nesting than any cache record has is refused, so no input can exhaust the stack. */
    public static final int MAX_DEPTH = 32;

    /** The document does not fit the record it was read as (the message says where). */
    public static final class Malformed extends Exception {
        Malformed(String message) {
            super(message);
        }
    }

    private final String text;
    private int at;

    private RecordJson(String text) {
        this.text = text;
    }

    /** {@code utf8} as a {@code type}. */
    public static <T extends Record> T read(byte[] utf8, Class<T> type) throws Malformed {
        RecordJson parser = new RecordJson(new String(utf8, StandardCharsets.UTF_8));
        parser.skipSpace();
        Object tree = parser.value(0);
        parser.skipSpace();
        if (parser.at != parser.text.length()) {
            throw new Malformed("bytes after the document at " + parser.at);
        }
        return type.cast(bind(tree, type, "$"));
    }

    // ---- parsing: objects as LinkedHashMap (a null value kept apart from a missing one), arrays as ArrayList,
    // numbers as their text (bound to int, long or double later), strings, Boolean, null.

    private record NumberText(String text) {}

    private Object value(int depth) throws Malformed {
        if (depth > MAX_DEPTH) {
            throw new Malformed("nested deeper than " + MAX_DEPTH + " at " + at);
        }
        if (at >= text.length()) {
            throw new Malformed("the document ends where a value should be");
        }
        char c = text.charAt(at);
        return switch (c) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw new Malformed("unexpected '" + printable(c) + "' at " + at);
            }
        };
    }

    private Map<String, Object> object(int depth) throws Malformed {
        Map<String, Object> members = new LinkedHashMap<>();
        at++; // {
        skipSpace();
        if (peek() == '}') {
            at++;
            return members;
        }
        while (true) {
            skipSpace();
            if (peek() != '"') {
                throw new Malformed("a property name expected at " + at);
            }
            String name = string();
            skipSpace();
            expect(':');
            skipSpace();
            members.put(name, value(depth + 1));
            skipSpace();
            char next = peek();
            at++;
            if (next == '}') {
                return members;
            }
            if (next != ',') {
                throw new Malformed("',' or '}' expected at " + (at - 1));
            }
        }
    }

    private List<Object> array(int depth) throws Malformed {
        List<Object> elements = new ArrayList<>();
        at++; // [
        skipSpace();
        if (peek() == ']') {
            at++;
            return elements;
        }
        while (true) {
            skipSpace();
            elements.add(value(depth + 1));
            skipSpace();
            char next = peek();
            at++;
            if (next == ']') {
                return elements;
            }
            if (next != ',') {
                throw new Malformed("',' or ']' expected at " + (at - 1));
            }
        }
    }

    private String string() throws Malformed {
        at++; // "
        StringBuilder out = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw new Malformed("a string runs past the end of the document");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw new Malformed("a control character in a string at " + (at - 1));
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) {
                throw new Malformed("a string runs past the end of the document");
            }
            char escaped = text.charAt(at++);
            switch (escaped) {
                case '"', '\\', '/' -> out.append(escaped);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw new Malformed("a \\u escape runs past the end of the document");
                    }
                    int code = 0;
                    for (int i = 0; i < 4; i++) {
                        int digit = Character.digit(text.charAt(at++), 16);
                        if (digit < 0) {
                            throw new Malformed("a bad \\u escape at " + (at - 1));
                        }
                        code = code * 16 + digit;
                    }
                    out.append((char) code);
                }
                default -> throw new Malformed("a bad escape '\\" + printable(escaped) + "' at " + (at - 1));
            }
        }
    }

    private NumberText number() throws Malformed {
        int start = at;
        if (peek() == '-') {
            at++;
        }
        int digits = at;
        while (at < text.length() && "0123456789.eE+-".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        if (at == digits) {
            throw new Malformed("a number without digits at " + start);
        }
        return new NumberText(text.substring(start, at)); // its form is checked where it is bound
    }

    private Object literal(String word, Object value) throws Malformed {
        if (!text.startsWith(word, at)) {
            throw new Malformed("unexpected '" + printable(text.charAt(at)) + "' at " + at);
        }
        at += word.length();
        return value;
    }

    private void skipSpace() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private char peek() throws Malformed {
        if (at >= text.length()) {
            throw new Malformed("the document ends early");
        }
        return text.charAt(at);
    }

    private void expect(char c) throws Malformed {
        if (peek() != c) {
            throw new Malformed("'" + c + "' expected at " + at);
        }
        at++;
    }

    private static String printable(char c) {
        return c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c);
    }

    // ---- binding

    private static Object bind(Object value, Type type, String where) throws Malformed {
        if (type instanceof Class<?> c) {
            if (c.isPrimitive()) {
                return primitive(value, c, where);
            }
            if (value == null) {
                return null;
            }
            if (c == String.class) {
                if (value instanceof String s) {
                    return s;
                }
                throw new Malformed(where + ": a string expected");
            }
            if (c == Integer.class || c == Long.class || c == Double.class || c == Boolean.class) {
                return primitive(value, c, where);
            }
            if (c.isRecord()) {
                return record(value, c, where);
            }
        } else if (type instanceof ParameterizedType p && p.getRawType() == List.class) {
            if (value == null) {
                return null;
            }
            if (!(value instanceof List<?> elements)) {
                throw new Malformed(where + ": an array expected");
            }
            List<Object> bound = new ArrayList<>(elements.size());
            for (int i = 0; i < elements.size(); i++) {
                bound.add(bind(elements.get(i), p.getActualTypeArguments()[0], where + "[" + i + "]"));
            }
            return bound;
        } else if (type instanceof ParameterizedType p && p.getRawType() == Map.class
                && p.getActualTypeArguments()[0] == String.class) {
            if (value == null) {
                return null;
            }
            if (!(value instanceof Map<?, ?> members)) {
                throw new Malformed(where + ": an object expected");
            }
            Map<String, Object> bound = new LinkedHashMap<>();
            for (Map.Entry<?, ?> member : members.entrySet()) {
                String key = (String) member.getKey();
                bound.put(key, bind(member.getValue(), p.getActualTypeArguments()[1], where + "." + key));
            }
            return bound;
        }
        throw new IllegalArgumentException(where + ": RecordJson reads no " + type); // a record of ours: a bug
    }

    private static Object primitive(Object value, Class<?> type, String where) throws Malformed {
        if (type == boolean.class || type == Boolean.class) {
            if (value == null) {
                return false;
            }
            if (value instanceof Boolean b) {
                return b;
            }
            throw new Malformed(where + ": true or false expected");
        }
        if (value == null) {
            return type == int.class || type == Integer.class ? (Object) 0
                    : type == long.class || type == Long.class ? (Object) 0L : (Object) 0.0;
        }
        if (!(value instanceof NumberText number)) {
            throw new Malformed(where + ": a number expected");
        }
        try {
            if (type == int.class || type == Integer.class) {
                return Integer.parseInt(number.text());
            }
            if (type == long.class || type == Long.class) {
                return Long.parseLong(number.text());
            }
            if (type == double.class || type == Double.class) {
                return Double.parseDouble(number.text()); // only digits, '.', 'e', '+', '-' reach here
            }
        } catch (NumberFormatException e) {
            throw new Malformed(where + ": " + number.text() + " is no " + type.getSimpleName());
        }
        throw new IllegalArgumentException(where + ": RecordJson reads no " + type);
    }

    private static Object record(Object value, Class<?> type, String where) throws Malformed {
        if (!(value instanceof Map<?, ?> members)) {
            throw new Malformed(where + ": an object expected");
        }
        RecordComponent[] components = type.getRecordComponents();
        Class<?>[] types = new Class<?>[components.length];
        Object[] arguments = new Object[components.length];
        for (int i = 0; i < components.length; i++) {
            RecordComponent component = components[i];
            types[i] = component.getType();
            arguments[i] = bind(members.get(component.getName()), component.getGenericType(),
                    where + "." + component.getName());
        }
        try {
            Constructor<?> canonical = type.getDeclaredConstructor(types);
            canonical.setAccessible(true); // the cache records are package-private
            return canonical.newInstance(arguments);
        } catch (InvocationTargetException e) {
            throw new Malformed(where + ": " + type.getSimpleName() + " refuses it: " + e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(where + ": cannot construct " + type, e);
        }
    }
}
