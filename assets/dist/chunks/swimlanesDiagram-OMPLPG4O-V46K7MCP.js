import{a as o,b as m}from"./chunk-L3DJU7HA.js";import"./chunk-UU5CVTII.js";import"./chunk-NBH7YOBD.js";import"./chunk-5P5RLOSN.js";import"./chunk-BMUPLFXD.js";import"./chunk-JC3F2JW3.js";import"./chunk-HDBSDA6B.js";import"./chunk-25KVF5ZE.js";import"./chunk-JHDYYIYJ.js";import"./chunk-PMMWNP2E.js";import"./chunk-2VQGPVPI.js";import"./chunk-ZE73JRHS.js";import"./chunk-YORIST7Z.js";import"./chunk-YOFNE3OX.js";import"./chunk-6GZY3IMN.js";import"./chunk-6GH2UMGY.js";import"./chunk-HIGPS4L2.js";import"./chunk-ZKI63735.js";import"./chunk-ACR3343X.js";import"./chunk-JCBSA4G4.js";import"./chunk-BADNX6SZ.js";import"./chunk-O5DZRKTY.js";import{a as r}from"./chunk-EIBFAW37.js";import"./chunk-PHKIAKHS.js";var i=r(t=>`${o(t)}
  .swimlane.cluster:not([data-color-id]) rect {
    stroke: ${t.clusterBorder} !important;
  }
  [data-look="neo"].cluster rect {
    filter: none;
  }
`,"getStyles"),e=i,F=m({styles:e});export{F as diagram};
