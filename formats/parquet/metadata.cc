#include "formats/parquet/metadata.h"

#include <iterator>

#include "formats/error.h"
#include "formats/parquet/thrift_compact.h"

namespace sparktorch {
namespace parquet {
namespace {

using T = ThriftReader;

// Calls `field(id, type)` for every field of the struct at the reader; `field` returns false
// for a field it did not read, which is then skipped.
template <typename Field>
void ReadStruct(ThriftReader& in, Field field) {
  in.BeginStruct();
  int16_t id = 0;
  for (T::Type type = in.NextField(&id); type != T::kStop; type = in.NextField(&id)) {
    if (!field(id, type)) in.Skip(type);
  }
  in.EndStruct();
}

// Calls `element()` for each element of the list at the reader.
template <typename Element>
void ReadList(ThriftReader& in, Element element) {
  uint32_t n = 0;
  in.ReadListHeader(&n);
  for (uint32_t i = 0; i < n; ++i) element();
}

bool IsInt(T::Type type) { return type == T::kI32 || type == T::kI16 || type == T::kByte; }

SchemaElement ReadSchemaElement(ThriftReader& in) {
  SchemaElement e;
  ReadStruct(in, [&](int16_t id, T::Type type) {
    if (id == 1 && IsInt(type)) {
      e.type = static_cast<PhysicalType>(in.ReadI32());
    } else if (id == 3 && IsInt(type)) {
      e.repetition = static_cast<Repetition>(in.ReadI32());
    } else if (id == 4 && type == T::kBinary) {
      e.name = in.ReadBinary();
    } else if (id == 5 && IsInt(type)) {
      e.num_children = in.ReadI32();
    } else if (id == 6 && IsInt(type)) {
      const int32_t converted = in.ReadI32();
      e.decimal = e.decimal || converted == 5;                          // DECIMAL
      e.is_unsigned = e.is_unsigned || (converted >= 11 && converted <= 14);  // UINT_8 .. UINT_64
    } else if (id == 10 && type == T::kStruct) {
      ReadStruct(in, [&](int16_t member, T::Type member_type) {
        e.decimal = e.decimal || member == 5;  // LogicalType's DECIMAL member
        if (member != 10 || member_type != T::kStruct) return false;
        ReadStruct(in, [&](int16_t int_field, T::Type int_type) {  // IntType
          if (int_field != 2 || (int_type != T::kTrue && int_type != T::kFalse)) return false;
          e.is_unsigned = int_type == T::kFalse;  // isSigned, a bool held in its type
          return true;
        });
        return true;
      });
    } else {
      return false;
    }
    return true;
  });
  return e;
}

void ReadColumnMetaData(ThriftReader& in, ColumnChunk* c) {
  ReadStruct(in, [&](int16_t id, T::Type type) {
    if (id == 1 && IsInt(type)) {
      c->type = static_cast<PhysicalType>(in.ReadI32());
    } else if (id == 2 && type == T::kList) {
      ReadList(in, [&] { c->encodings.push_back(static_cast<Encoding>(in.ReadI32())); });
    } else if (id == 3 && type == T::kList) {
      ReadList(in, [&] { c->path.push_back(in.ReadBinary()); });
    } else if (id == 4 && IsInt(type)) {
      c->codec = static_cast<Codec>(in.ReadI32());
    } else if (id == 5 && type == T::kI64) {
      c->num_values = in.ReadI64();
    } else if (id == 7 && type == T::kI64) {
      c->total_compressed_size = in.ReadI64();
    } else if (id == 9 && type == T::kI64) {
      c->data_page_offset = in.ReadI64();
    } else if (id == 11 && type == T::kI64) {
      c->dictionary_page_offset = in.ReadI64();
    } else {
      return false;
    }
    return true;
  });
}

ColumnChunk ReadColumnChunk(ThriftReader& in) {
  ColumnChunk c;
  bool has_meta = false;
  ReadStruct(in, [&](int16_t id, T::Type type) {
    if (id == 1 && type == T::kBinary) {
      throw InputError("column data in another file (ColumnChunk.file_path \"" + in.ReadBinary() +
                       "\") is not supported");
    }
    if (id != 3 || type != T::kStruct) return false;
    ReadColumnMetaData(in, &c);
    has_meta = true;
    return true;
  });
  if (!has_meta) throw InputError("a column chunk without its metadata");
  return c;
}

RowGroup ReadRowGroup(ThriftReader& in) {
  RowGroup g;
  ReadStruct(in, [&](int16_t id, T::Type type) {
    if (id == 1 && type == T::kList) {
      ReadList(in, [&] { g.columns.push_back(ReadColumnChunk(in)); });
    } else if (id == 3 && type == T::kI64) {
      g.num_rows = in.ReadI64();
    } else {
      return false;
    }
    return true;
  });
  return g;
}

}  // namespace

FileMetaData ParseFileMetaData(const uint8_t* data, size_t size) {
  ThriftReader in(data, size);
  FileMetaData m;
  ReadStruct(in, [&](int16_t id, T::Type type) {
    if (id == 2 && type == T::kList) {
      ReadList(in, [&] { m.schema.push_back(ReadSchemaElement(in)); });
    } else if (id == 3 && type == T::kI64) {
      m.num_rows = in.ReadI64();
    } else if (id == 4 && type == T::kList) {
      ReadList(in, [&] { m.row_groups.push_back(ReadRowGroup(in)); });
    } else if (id == 6 && type == T::kBinary) {
      m.created_by = in.ReadBinary();
    } else {
      return false;
    }
    return true;
  });
  return m;
}

PageHeader ParsePageHeader(const uint8_t* data, size_t size, size_t* header_size) {
  ThriftReader in(data, size);
  PageHeader h;
  auto data_page = [&](int16_t id, T::Type type) {
    if (!IsInt(type)) return false;
    int32_t v = in.ReadI32();
    if (id == 1) h.num_values = v;
    if (id == 2) h.encoding = static_cast<Encoding>(v);
    if (id == 3) h.definition_level_encoding = static_cast<Encoding>(v);
    if (id == 4) h.repetition_level_encoding = static_cast<Encoding>(v);
    return true;
  };
  auto data_page_v2 = [&](int16_t id, T::Type type) {
    if (id == 7 && (type == T::kTrue || type == T::kFalse)) {
      h.is_compressed = type == T::kTrue;
      return true;
    }
    if (!IsInt(type)) return false;
    int32_t v = in.ReadI32();
    if (id == 1) h.num_values = v;
    if (id == 4) h.encoding = static_cast<Encoding>(v);
    if (id == 5) h.definition_levels_byte_length = v;
    if (id == 6) h.repetition_levels_byte_length = v;
    return true;
  };
  ReadStruct(in, [&](int16_t id, T::Type type) {
    if (id == 1 && IsInt(type)) {
      h.type = static_cast<PageType>(in.ReadI32());
    } else if (id == 2 && IsInt(type)) {
      h.uncompressed_page_size = in.ReadI32();
    } else if (id == 3 && IsInt(type)) {
      h.compressed_page_size = in.ReadI32();
    } else if ((id == 5 || id == 7) && type == T::kStruct) {
      ReadStruct(in, data_page);  // DataPageHeader and DictionaryPageHeader share 1 and 2
    } else if (id == 8 && type == T::kStruct) {
      ReadStruct(in, data_page_v2);
    } else {
      return false;
    }
    return true;
  });
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 || h.num_values < 0 ||
      h.definition_levels_byte_length < 0 || h.repetition_levels_byte_length < 0) {
    throw InputError("a page header with a negative size");
  }
  *header_size = in.position();
  return h;
}

std::string CodecName(Codec codec) {
  static const char* const kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                       "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
  auto i = static_cast<size_t>(codec);
  return i < std::size(kNames) ? kNames[i] : "codec " + std::to_string(static_cast<int>(codec));
}

std::string EncodingName(Encoding encoding) {
  static const char* const kNames[] = {
      "PLAIN",      "GROUP_VAR_INT",         "PLAIN_DICTIONARY", "RLE",           "BIT_PACKED",
      "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY",
      "BYTE_STREAM_SPLIT"};
  auto i = static_cast<size_t>(encoding);
  return i < std::size(kNames) ? kNames[i]
                               : "encoding " + std::to_string(static_cast<int>(encoding));
}

std::string TypeName(PhysicalType type) {
  static const char* const kNames[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                       "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  auto i = static_cast<size_t>(type);
  return i < std::size(kNames) ? kNames[i]
                               : "physical type " + std::to_string(static_cast<int>(type));
}

}  // namespace parquet
}  // namespace sparktorch
