-- Makes a manual page of a docs/ page (make man): the page's own title and introduction, which
-- speak of the page as Markdown, give way to the manual's NAME section and what follows; section
-- headings become the upper-case .SH headings man pages use. Headings shift one level up on the
-- command line (--shift-heading-level-by=-1), so "## Name" arrives here as level 1.
-- pandoc -s -t man --shift-heading-level-by=-1 --lua-filter manpage.lua -M name=NAME -M section=N
-- A table of key | default | meaning (docs/configuration.md) reads badly at 80 columns: in the
-- manual each row becomes an entry of a definition list, the key as the term, then "Default: …"
-- (when the row has one) and the meaning.
function Table(source)
  local simple = pandoc.utils.to_simple_table(source)
  local items = {}
  for _, row in ipairs(simple.rows) do
    local term = pandoc.utils.blocks_to_inlines(row[1])
    local definition = {}
    if #row >= 3 then
      local default = pandoc.utils.blocks_to_inlines(row[2])
      if #default > 0 then
        local line = {pandoc.Emph({pandoc.Str("Default:")}), pandoc.Space()}
        for _, inline in ipairs(default) do table.insert(line, inline) end
        table.insert(definition, pandoc.Para(line))
      end
      for _, block in ipairs(row[3]) do table.insert(definition, block) end
    else
      for index = 2, #row do
        for _, block in ipairs(row[index]) do table.insert(definition, block) end
      end
    end
    table.insert(items, {term, {definition}})
  end
  return pandoc.DefinitionList(items)
end

function Pandoc(doc)
  local blocks = {}
  local started = false
  for _, block in ipairs(doc.blocks) do
    if block.t == "Header" and block.level == 1 and pandoc.utils.stringify(block) == "Name" then
      started = true
    end
    if started then
      if block.t == "Header" and block.level == 1 then
        block = pandoc.Header(1, pandoc.utils.stringify(block):upper(), block.attr)
      end
      table.insert(blocks, block)
    end
  end
  if not started then
    error("the page has no \"## Name\" section")
  end
  -- The title pandoc took from the page's first heading gives way to the page's name (-M name=…).
  doc.meta.title = doc.meta.name
  return pandoc.Pandoc(blocks, doc.meta)
end
