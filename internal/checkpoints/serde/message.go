package serde

// LangChainMessage turns the fields of a LangChain message object of class
// module.class into LangChain's plain message dict, exactly as Decode does for
// messages in Python-written msgpack blobs: "type" set from the class name when
// missing ("human", "ai", "tool", ...; chunks keep the class name) and the
// fields every message has filled with LangChain's defaults. module is dotted
// ("langchain_core.messages"). It reports false, leaving fields untouched,
// when module.class is not a LangChain message class. It exists so that other
// encodings of the same messages (the JS saver's {"lc":1,...} constructors)
// read back in the same shape.
func LangChainMessage(module, class string, fields map[string]any) (map[string]any, bool) {
	if !isMessageClass(module, class) {
		return fields, false
	}
	return message(class, fields), true
}
